"""The transparency log of a store: C2SP signed notes, checkpoints and tiles (RFC 6962
trees), appending, inclusion and consistency proofs, the monitor (docs/transparency-log.md)."""
