"""SHA256SUMS: `sha256sum -c` compatible, read as strictly as `sha256sum --strict` and stricter.

Each line is `<64 lowercase hex><two spaces><path>\\n`, sorted by the path's UTF-8 bytes; no
binary marker, no escaped names, no CR, no blank lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings, Refused

# the file both bundle kinds carry (model.manifest and model.harness.layout name it too; not
# imported from there: a harness verify never loads the native manifest's models)
CHECKSUMS_NAME = "SHA256SUMS"

MAX_CHECKSUMS_BYTES = 1 << 20
_LINE = re.compile(r"([0-9a-f]{64})  (.+)")
_OTHER_DIGEST = re.compile(r"([0-9A-Fa-f]+) [ *](.+)")
_OTHER_LENGTHS = {32: "MD5", 40: "SHA-1", 56: "SHA-224", 96: "SHA-384", 128: "SHA-512"}


def render(digests: Mapping[str, str]) -> bytes:
    """SHA256SUMS content for `digests` (path -> hex), sorted by path bytes."""
    lines = [f"{digests[p]}  {p}\n" for p in sorted(digests, key=lambda p: p.encode("utf-8"))]
    return "".join(lines).encode("utf-8")


def parse(data: bytes, *, source: str = CHECKSUMS_NAME,
          max_bytes: int = MAX_CHECKSUMS_BYTES) -> dict[str, str]:
    """Path -> hex digest; raises Refused listing every malformed line. `max_bytes`: a native
    bundle's cap unless its reader names its own (a harness bundle's is sized to its zip)."""
    if len(data) > max_bytes:
        raise Refused.one(codes.CHECKSUM_FORMAT, f"{source}: {len(data)} bytes, limit {max_bytes}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused.one(codes.CHECKSUM_FORMAT,
                          f"{source}: invalid UTF-8 at byte {exc.start}") from None
    findings = Findings()
    if text and not text.endswith("\n"):
        findings.add(codes.CHECKSUM_FORMAT, f"{source}: the last line has no newline")
    digests: dict[str, str] = {}
    order: list[str] = []
    for number, line in enumerate(text.split("\n")[:-1] if text else [], start=1):
        where = f"{source}:{number}"
        if "\r" in line:
            findings.add(codes.CHECKSUM_FORMAT, f"{where}: carriage return (CRLF line ending)")
            continue
        if line.startswith("\\"):
            findings.add(codes.CHECKSUM_FORMAT, f"{where}: escaped file name")
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            other = _OTHER_DIGEST.fullmatch(line)
            if other and len(other.group(1)) in _OTHER_LENGTHS and len(other.group(1)) != 64:
                findings.add(codes.CHECKSUM_ALGORITHM,
                             f"{where}: a {_OTHER_LENGTHS[len(other.group(1))]} digest")
            else:
                findings.add(codes.CHECKSUM_FORMAT,
                             f"{where}: {line[:80]!r} is not '<64 lowercase hex>  <path>'")
            continue
        digest, path = match.groups()
        if path == CHECKSUMS_NAME:
            findings.add(codes.CHECKSUM_SELF, f"{where}: lists {CHECKSUMS_NAME} itself")
            continue
        if problem := paths.path_problem(path):
            findings.add(codes.CHECKSUM_FORMAT, f"{where}: path {path!r}: {problem}")
            continue
        if path in digests:
            findings.add(codes.CHECKSUM_DUPLICATE, f"{where}: {path!r} listed twice")
            continue
        digests[path] = digest
        order.append(path)
    if order != sorted(order, key=lambda p: p.encode("utf-8")):
        findings.add(codes.CHECKSUM_FORMAT, f"{source}: lines are not sorted by path")
    findings.raise_if_any()
    return digests
