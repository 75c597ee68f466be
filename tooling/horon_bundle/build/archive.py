"""The deterministic bundle archive: same bundle directory in, same zip bytes out.

Entries sorted by UTF-8 name, one fixed timestamp (SOURCE_DATE_EPOCH, clamped to 1980…2107),
Unix create-system, modes 0644/0755 only, no directory entries, no comment, no extra fields,
deflate at a fixed level, or stored where deflate would not pay (`stores`).
"""

from __future__ import annotations

import os
import stat
import time
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path

from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.files import write_atomic
from horon_bundle.core.hashing import CHUNK, Digest, hash_file
from horon_bundle.model.sidefiles import DIGEST_SUFFIX, beside

ZIP_EPOCH_MIN = 315532800  # 1980-01-01T00:00:00Z, the earliest time a zip entry can hold
ZIP_EPOCH_MAX = 4354819199  # 2107-12-31T23:59:59Z
COMPRESS_LEVEL = 6  # measured: docs/bundle-format.md, "The archive"
# An entry is stored when deflate at COMPRESS_LEVEL saves less than 1/STORE_MARGIN of its
# sample (docs/bundle-format.md, "Stored entries"): the whole file up to SAMPLE_BLOCK *
# SAMPLE_BLOCKS bytes, else SAMPLE_BLOCKS blocks of SAMPLE_BLOCK bytes at fixed places.
STORE_MARGIN = 32
SAMPLE_BLOCK = 16 << 10
SAMPLE_BLOCKS = 64


def clamp_epoch(epoch: int) -> int:
    return min(max(epoch, ZIP_EPOCH_MIN), ZIP_EPOCH_MAX)


def zip_date_time(epoch: int) -> tuple[int, int, int, int, int, int]:
    moment = time.gmtime(clamp_epoch(epoch))
    # zip stores even seconds only; round down so readers agree on the value
    return (moment.tm_year, moment.tm_mon, moment.tm_mday, moment.tm_hour, moment.tm_min,
            moment.tm_sec - moment.tm_sec % 2)


def _deflated(data: bytes) -> bytes:
    """`data` deflated as zipfile deflates an entry written in one piece (one `compress`, one
    `flush` of a raw deflate stream at COMPRESS_LEVEL): the entry's bytes when `data` is the
    whole file."""
    deflate = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return deflate.compress(data) + deflate.flush()


def store_decision(fd: int, size: int) -> tuple[bool, bytes | None, bytes | None]:
    """(stored?, the sample, its deflated bytes) for the open file `fd` of `size` bytes. A
    file of at most one sample is read whole (one `pread`): then the sample is the file and
    its deflated bytes are the entry's, deflated once; a larger file gives (stored?, None,
    None) from SAMPLE_BLOCKS blocks at fixed places."""
    if size <= SAMPLE_BLOCK * SAMPLE_BLOCKS:
        whole = os.pread(fd, size, 0)
        packed = _deflated(whole)
        return _stores(len(whole), len(packed)), whole, packed
    step = (size - SAMPLE_BLOCK) // (SAMPLE_BLOCKS - 1)
    samples = [os.pread(fd, SAMPLE_BLOCK, number * step) for number in range(SAMPLE_BLOCKS)]
    plain = sum(len(sample) for sample in samples)
    return _stores(plain, sum(len(_deflated(sample)) for sample in samples)), None, None


def _stores(plain: int, packed: int) -> bool:
    return packed * STORE_MARGIN > plain * (STORE_MARGIN - 1)


def stores(path: Path) -> bool:
    """Whether the archive stores the file at `path` rather than deflating it: a rule on its
    bytes alone (the same on every machine with the same zlib), decided from the deflated
    result of its sample, so that an incompressible library is neither deflated at build
    nor inflated at every verify, install and publish."""
    with path.open("rb") as reader:
        return store_decision(reader.fileno(), os.fstat(reader.fileno()).st_size)[0]


def write_archive(bundle: Path, files: Iterable[tuple[str, bool]], destination: Path,
                  *, epoch: int) -> Digest:
    """Zip the bundle's `files` (relative path, executable) into `destination` atomically."""
    date_time = zip_date_time(epoch)
    temp = destination.with_name(f".{destination.name}.partial")
    temp.unlink(missing_ok=True)
    try:
        with zipfile.ZipFile(temp, "x", compression=zipfile.ZIP_DEFLATED,
                             compresslevel=COMPRESS_LEVEL) as archive:
            for name, executable in sorted(files, key=lambda item: item[0].encode("utf-8")):
                source = bundle / name
                info = zipfile.ZipInfo(name, date_time=date_time)
                info.create_system = 3
                info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
                if stores(source):
                    info.compress_type = zipfile.ZIP_STORED
                else:
                    info.compress_type = zipfile.ZIP_DEFLATED
                    # ZipInfo.compress_level is public only from 3.13; _compresslevel holds it
                    info._compresslevel = COMPRESS_LEVEL  # type: ignore[attr-defined]
                info.file_size = source.stat().st_size
                with source.open("rb") as reader, archive.open(info, "w") as writer:
                    while chunk := reader.read(CHUNK):
                        writer.write(chunk)
                checkpoint("build.archive")
        digest = hash_file(temp)
        temp.replace(destination)
    finally:
        temp.unlink(missing_ok=True)
    return digest


def write_digest_file(archive: Path, digest: Digest) -> Path:
    """`<archive>.sha256` in `sha256sum` format, next to the archive."""
    path = beside(archive, DIGEST_SUFFIX)
    write_atomic(path, f"{digest.sha256}  {archive.name}\n".encode())
    return path
