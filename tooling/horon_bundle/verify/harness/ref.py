"""Checking a zip against its `{name, sha256}` ref before reading any of its entries."""

from __future__ import annotations

from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_file
from horon_bundle.core.inputs import read_input
from horon_bundle.model.harness.ref import MAX_REF_BYTES, BundleRef, parse_ref


def read_ref(path: Path) -> BundleRef:
    data = read_input(path, limit=MAX_REF_BYTES, what="ref")
    assert data is not None  # not missing_ok: an absent ref is input.unreadable
    return parse_ref(data, source=path.name)


def check_digest(ref: BundleRef, archive: Path, *, ref_label: str) -> None:
    """The archive's SHA-256 (a plain read of its bytes: no entry is opened) equals the ref's."""
    if archive.is_symlink() or not archive.is_file():
        what = "a symbolic link, which is not followed" if archive.is_symlink() else \
            "not a regular file" if archive.exists() else "no such file"
        raise Refused.one(codes.REF_ZIP_MISSING, f"{ref_label} names {archive}: {what}")
    try:
        digest = hash_file(archive)
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE,
                          f"{archive}: {exc.strerror or exc}") from None
    if digest.sha256 != ref.sha256:
        raise Refused.one(codes.REF_DIGEST,
                          f"{archive.name}: sha256 {digest.sha256} != {ref_label} {ref.sha256}")
