"""A native bundle's files: layout, the metadata files, and integrity, as rows of
`verify.judge.NATIVE_CHECKS`.

Each file is hashed once (metadata files from the bytes already read, everything else by
streaming); nothing is extracted or written. Only files plugin.json declares are read at
all: an undeclared file is refused from its name alone, never inflated or hashed.
"""

from __future__ import annotations

from horon_bundle.abi.section import StreamWindows, WindowedAccess, read_section
from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.hashing import Digest, hash_bytes, hash_stream
from horon_bundle.core.streams import ByteStream
from horon_bundle.model import checksums
from horon_bundle.model.harness.layout import is_harness
from horon_bundle.model.manifest import (
    CHECKSUMS_NAME,
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    Manifest,
    parse_manifest,
)
from horon_bundle.verify.check_table import Judged, Skipped, Verdict
from horon_bundle.verify.native_context import NativeContext, SectionState
from horon_bundle.verify.reading.interface import BundleSource


def check_file_types(ctx: NativeContext) -> Verdict:
    """layout.file-types: what the walk or the archive reader refused (links, devices …)."""
    return Judged(list(ctx.source.layout_findings))


def read_metadata(ctx: NativeContext) -> Verdict:
    """layout.metadata-files: plugin.json and SHA256SUMS, each read without the other."""
    source = ctx.source
    missing = Findings()
    for name, limit in ((MANIFEST_NAME, MAX_MANIFEST_BYTES),
                        (CHECKSUMS_NAME, checksums.MAX_CHECKSUMS_BYTES)):
        if name not in source.files:
            if name == MANIFEST_NAME and is_harness(source.files):
                missing.add(codes.LAYOUT_HARNESS_BUNDLE, f"{source.label}: a harness bundle, "
                                                         "not a native one: no plugin.json at "
                                                         "its root")
                continue
            missing.add(codes.LAYOUT_MISSING, f"{source.label}: {name} is missing")
            continue
        try:
            ctx.metadata[name] = source.read_small(name, limit)
        except Refused as exc:
            missing.extend(exc.findings)
    return Judged(list(missing))


def check_manifest(ctx: NativeContext) -> Verdict:
    """manifest.strict: plugin.json by its strict decoder."""
    if MANIFEST_NAME not in ctx.metadata:
        return Skipped("plugin.json unreadable")
    try:
        ctx.manifest = parse_manifest(ctx.metadata[MANIFEST_NAME])
    except Refused as exc:
        return Judged(exc.findings)
    ctx.report.manifest = ctx.manifest
    return Judged()


def check_checksums_format(ctx: NativeContext) -> Verdict:
    """checksums.format: SHA256SUMS by its strict reader."""
    if CHECKSUMS_NAME not in ctx.metadata:
        return Skipped("SHA256SUMS unreadable")
    try:
        ctx.listed = checksums.parse(ctx.metadata[CHECKSUMS_NAME])
    except Refused as exc:
        return Judged(exc.findings)
    return Judged()


def hash_files(ctx: NativeContext) -> Verdict | None:
    """integrity.read: every declared file hashed once, the library's section kept on the way
    (reported only when an archive entry fails its CRC or size check while streaming; then
    nothing after it runs)."""
    source, manifest = ctx.source, ctx.manifest
    provenance_path, provenance_bytes = ctx.provenance_path, ctx.provenance_bytes
    library_path = manifest.library.path if manifest is not None else None
    windows = StreamWindows()
    wanted = set(ctx.metadata) | (set(manifest.declared_files()) if manifest is not None
                                  else set())
    try:
        digests = _hash_all(source, wanted & set(source.files),
                            {**ctx.metadata, **({provenance_path: provenance_bytes}
                                                if provenance_path and provenance_bytes else {})},
                            watch=(library_path, windows))
    except Refused as exc:
        return Judged(exc.findings)
    ctx.digests = ctx.report.digests = digests
    ctx.section = _read_section(source, manifest, windows)
    return None


def _hash_all(source: BundleSource, wanted: set[str], already_read: dict[str, bytes],
              watch: tuple[str | None, StreamWindows]) -> dict[str, Digest]:
    """Hash every wanted file once; the watched one (the library) also fills its windows."""
    digests = {}
    watched, windows = watch
    for path in sorted(wanted):
        if path in already_read:
            digests[path] = hash_bytes(already_read[path])
            continue
        known = source.known_digest(path)
        if known is not None:  # build's own staging: hashed as it was written
            digests[path] = known
            if path == watched:
                _fill_windows(source, path, known.size, windows)
            continue
        stream = source.open(path, resumable=path == watched)
        try:
            digests[path] = hash_stream(stream,  # type: ignore[arg-type]
                                        windows.feed if path == watched else None)
        finally:
            stream.close()
    return digests


def _fill_windows(source: BundleSource, path: str, size: int, windows: StreamWindows) -> None:
    """The head and tail windows of a file not streamed, by two targeted reads of it."""
    stream = source.open(path, resumable=True)
    try:
        windows.feed(_read_exactly(stream, min(size, StreamWindows.HEAD)))
        tail = max(StreamWindows.HEAD, size - StreamWindows.TAIL)
        if tail < size:
            stream.seek(tail)  # type: ignore[attr-defined]
            windows.tail = bytearray()
            windows.feed(_read_exactly(stream, size - tail))
        windows.size = size
    finally:
        stream.close()


def _read_exactly(stream: ByteStream, length: int) -> bytes:
    parts = []
    while length > 0 and (part := stream.read(min(length, 1 << 20))):
        parts.append(part)
        length -= len(part)
    return b"".join(parts)


def _read_section(source: BundleSource, manifest: Manifest | None,
                  windows: StreamWindows) -> SectionState:
    """The library's .horon_abi section, from the windows kept while hashing it.

    Ranges outside the windows cost one targeted re-read of the library: a seek in a
    directory, a re-inflation from the nearest resume point in an archive (never from the
    entry's start); bounded memory, nothing loaded or extracted.
    """
    if manifest is None or manifest.library.path not in source.files:
        return SectionState(None, read=False)
    path = manifest.library.path
    access = WindowedAccess(windows, lambda: source.open(path))
    try:
        advertised = read_section(access, name=path, target=manifest.target)
    except Refused as exc:
        return SectionState(None, tuple(exc.findings))
    return SectionState(advertised)


def check_declared_files(ctx: NativeContext) -> Verdict:
    """layout.declared-files: every file present is declared, every declared file present."""
    if ctx.manifest is None:
        return Skipped("plugin.json was refused")
    label = ctx.source.label
    declared = ctx.manifest.declared_files()
    present = set(ctx.source.files)
    layout = Findings()
    for path in sorted(present - set(declared) - {MANIFEST_NAME, CHECKSUMS_NAME}):
        layout.add(codes.LAYOUT_UNDECLARED, f"{label}: {path!r} is not declared in plugin.json")
    for path in sorted(set(declared) - present):
        layout.add(codes.LAYOUT_MISSING, f"{label}: declared {path!r} is missing")
    return Judged(list(layout))


def check_declared_integrity(ctx: NativeContext) -> Verdict | None:
    """integrity.declared: each file's size and digest, each sidecar's executable bit, as
    plugin.json declares them."""
    manifest, source, digests = ctx.manifest, ctx.source, ctx.digests
    if manifest is None:
        return None
    label = source.label
    integrity = Findings()
    for path, ref in sorted(manifest.declared_files().items()):
        digest = digests.get(path)
        if digest is None:
            continue
        if digest.size != ref.size:
            integrity.add(codes.CHECKSUM_SIZE, f"{label}: {path!r} has {digest.size} bytes, "
                                               f"plugin.json says {ref.size}")
        if digest.sha256 != ref.sha256:
            integrity.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digest.sha256} "
                                                   f"!= plugin.json {ref.sha256}")
    for sidecar in manifest.sidecars:
        info = source.files.get(sidecar.file.path)
        if info is not None and info.executable not in (None, sidecar.executable):
            integrity.add(codes.LAYOUT_MODE, f"{label}: {sidecar.file.path!r} executable bit "
                                             f"is {info.executable}, plugin.json says "
                                             f"{sidecar.executable}")
    return Judged(list(integrity))


def check_sha256sums(ctx: NativeContext) -> Verdict | None:
    """integrity.sha256sums: SHA256SUMS lists every file present but itself, each digest."""
    listed, digests = ctx.listed, ctx.digests
    if ctx.manifest is None:
        return None
    if listed is None:
        return Skipped("SHA256SUMS was refused")
    label = ctx.source.label
    present = set(ctx.source.files)
    sums = Findings()
    for path in sorted(present - set(listed) - {CHECKSUMS_NAME}):
        sums.add(codes.CHECKSUM_UNLISTED, f"{label}: {path!r} is not listed in SHA256SUMS")
    for path in sorted(set(listed) - present):
        sums.add(codes.CHECKSUM_MISSING, f"{label}: SHA256SUMS lists {path!r}, not present")
    for path in sorted(set(listed) & set(digests)):
        if digests[path].sha256 != listed[path]:
            sums.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digests[path].sha256} "
                                              f"!= SHA256SUMS {listed[path]}")
    return Judged(list(sums))
