"""Assembling a bundle: stage the files, verify the staged bundle, rename it into place.

Nothing appears under the bundle's final name until the staged copy has verified; the
staging directory lives next to the output and is removed whatever happens. Each file is
hashed once, as it is written into staging (with its CRC-32, for the archive's headers):
the self-check judges the staged directory with every rule of verify, taking those digests
instead of hashing the files again (`verify.reading.staged`). The library was copied and
hashed before the probe child ran it: its digest is taken only while the copy's identity
(inode, size, mtime, ctime) is still the one recorded after the copy; a copy written since
is hashed again by the self-check, and refused when its bytes are not the ones recorded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Refused
from horon_bundle.core.file_identity import FileIdentity, identity_of
from horon_bundle.core.files import fsync_directory, remove_tree, staging_directory, write_new
from horon_bundle.core.hashing import Digest, copy_and_hash, hash_bytes
from horon_bundle.model import checksums
from horon_bundle.model.manifest import CHECKSUMS_NAME, MANIFEST_NAME, Asset, FileDigest, Manifest
from horon_bundle.model.provenance import PROVENANCE_NAME
from horon_bundle.verify.judge import verify_opened
from horon_bundle.verify.reading.staged import StagedSource
from horon_bundle.verify.report import VerifyReport


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedFile:
    """A file to copy into the bundle from outside (library, licence, sidecar)."""

    source: Path
    path: str
    executable: bool = False
    moved_digest: Digest | None = None  # set: the source is a private copy, hashed already
    # (with its CRC-32) by this run, whose identity was then `moved_identity`
    moved_identity: FileIdentity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Assembled:
    directory: Path
    manifest: Manifest
    files: tuple[tuple[str, bool], ...]
    written: dict[str, Digest]  # every file's digest, size and CRC-32, taken writing it
    report: VerifyReport
    unchanged: bool


def assemble_bundle(*, out: Path, name: str, copies: list[StagedFile],
                    generated: dict[str, bytes],
                    provenance: Callable[[dict[str, Digest]], bytes],
                    manifest: Callable[[dict[str, Digest]], Manifest]) -> Assembled:
    """Stage `copies` and `generated` files, then the provenance and plugin.json made from
    their digests, and SHA256SUMS; verify the staged bundle; rename it into `out/name`."""
    final = out / name
    with staging_directory(out, f".{name}.staging-") as staging:
        digests: dict[str, Digest] = {}
        executables: dict[str, bool] = {}
        changed: set[str] = set()  # moved since they were hashed: the self-check hashes them
        for item in copies:
            destination = staging / item.path
            destination.parent.mkdir(parents=True, exist_ok=True)
            mode = 0o755 if item.executable else 0o644
            try:
                if item.moved_digest is not None:
                    if item.moved_digest.crc32 is None:
                        raise ValueError(f"{item.source}: copied without its CRC-32")
                    # the probe child ran this copy: written since, it is hashed again
                    if identity_of(item.source.lstat()) != item.moved_identity:
                        changed.add(item.path)
                    item.source.rename(destination)
                    destination.chmod(mode)
                    digests[item.path] = item.moved_digest
                else:
                    digests[item.path] = copy_and_hash(item.source, destination, mode=mode,
                                                       crc=True)
            except OSError as exc:
                raise Refused.one(codes.INPUT_UNREADABLE,
                                  f"{item.source}: {exc.strerror or exc}") from None
            executables[item.path] = item.executable
        for path, data in generated.items():
            _write(staging, path, data, digests, executables)
        _write(staging, PROVENANCE_NAME, provenance(dict(digests)), digests, executables)
        made = manifest(dict(digests))
        _write(staging, MANIFEST_NAME, made.to_bytes(), digests, executables)
        sums = checksums.render({path: d.sha256 for path, d in digests.items()})
        _write(staging, CHECKSUMS_NAME, sums, digests, executables)
        checkpoint("build.staged")
        report = _self_check(staging, {p: d for p, d in digests.items() if p not in changed})
        if not report.ok:
            first = report.findings[0]
            raise Refused.one(codes.BUILD_NONDETERMINISTIC,
                              f"the staged bundle did not verify: {first.code.name}: "
                              f"{first.message}")
        files = tuple(sorted(executables.items()))
        unchanged = _install(staging, final)
        report.path = str(final)
    return Assembled(directory=final, manifest=made, files=files, written=digests,
                     report=report, unchanged=unchanged)


def _write(staging: Path, path: str, data: bytes, digests: dict[str, Digest],
           executables: dict[str, bool]) -> None:
    destination = staging / path
    destination.parent.mkdir(parents=True, exist_ok=True)
    write_new(destination, data)
    digests[path] = hash_bytes(data, crc=True)
    executables[path] = False


def _self_check(staging: Path, written: dict[str, Digest]) -> VerifyReport:
    """Every verify rule on the staged directory, with the digests taken writing it."""
    report = VerifyReport(path=str(staging))
    try:
        source = StagedSource(staging, written)
    except Refused as exc:
        report.judged("archive", list(exc.findings))
        return report
    with source:
        return verify_opened(source, report)


def _install(staging: Path, final: Path) -> bool:
    """Rename staging onto `final`, swapping out an older bundle; True if it was identical."""
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise Refused.one(codes.OUTPUT_EXISTS, f"{final}: exists and is not a bundle directory")
    unchanged = False
    if final.is_dir():
        with contextlib.suppress(OSError):
            unchanged = ((final / CHECKSUMS_NAME).read_bytes()
                         == (staging / CHECKSUMS_NAME).read_bytes())
        aside = final.with_name(f".{final.name}.old-{os.getpid()}")
        final.rename(aside)
        checkpoint("build.swapping")
        try:
            staging.rename(final)
        except OSError:
            aside.rename(final)
            raise
        remove_tree(aside)
    else:
        staging.rename(final)
    fsync_directory(final.parent)
    return unchanged


def manifest_assets(digests: dict[str, Digest], roles: dict[str, str]) -> tuple[Asset, ...]:
    """Assets (role -> path) in role order: provenance, sbom, notices."""
    order = ("provenance", "sbom", "notices")
    return tuple(
        Asset(role=role, file=FileDigest(path=roles[role], sha256=digests[roles[role]].sha256,
                                         size=digests[roles[role]].size))
        for role in order if role in roles)
