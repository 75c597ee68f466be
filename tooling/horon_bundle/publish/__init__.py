"""Publishing released bundles: gate, preflight, destinations, receipt (docs/publishing.md)."""
