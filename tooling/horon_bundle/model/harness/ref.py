"""`<zip>.ref.json`: the `{name, sha256}` a host hands a sandbox so it fetches, checks and
unpacks exactly those bytes. Exactly these two fields; the digest is the zip's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.identifiers import SHA256_HEX
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.harness.layout import REF_SUFFIX, ref_path
from horon_bundle.model.harness.names import name_problem

__all__ = ["MAX_REF_BYTES", "BundleRef", "parse_ref", "ref_path", "zip_of_ref"]

MAX_REF_BYTES = 4096


@dataclass(frozen=True, slots=True)
class BundleRef:
    name: str
    sha256: str

    def to_bytes(self) -> bytes:
        return canonical_bytes({"name": self.name, "sha256": self.sha256})


def parse_ref(data: bytes, *, source: str) -> BundleRef:
    document = read_json(data, source=source, max_bytes=MAX_REF_BYTES, max_depth=2)
    if not isinstance(document, dict) or set(document) != {"name", "sha256"}:
        got = sorted(document) if isinstance(document, dict) else type(document).__name__
        raise Refused.one(codes.REF_INVALID, f"{source}: expected exactly name and sha256, "
                                             f"got {got}")
    name, digest = document["name"], document["sha256"]
    if not isinstance(name, str) or name_problem(name):
        raise Refused.one(codes.REF_INVALID, f"{source}: name {name!r} is not a bundle name")
    if not isinstance(digest, str) or not SHA256_HEX.fullmatch(digest):
        raise Refused.one(codes.REF_INVALID,
                          f"{source}: sha256 {digest!r} is not 64 lowercase hex digits")
    return BundleRef(name=name, sha256=digest)


def zip_of_ref(ref: Path) -> Path | None:
    """X.zip for X.zip.ref.json (None when the name does not end so)."""
    if not ref.name.endswith(".zip" + REF_SUFFIX):
        return None
    return ref.with_name(ref.name[: -len(REF_SUFFIX)])
