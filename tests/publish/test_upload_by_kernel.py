"""A blob streamed from its file on a plain (loopback) connection is sent by sendfile(2),
piece by piece under the deadline, with the same refusals as the copying path."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.publish.destinations import oci_file_body
from horon_bundle.publish.destinations.interface import parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from tests.publish_support import Registry

pytestmark = pytest.mark.registry


def _client(registry: Registry) -> RegistryClient:
    return RegistryClient(parse_address(registry.destination), {})  # type: ignore[arg-type]


def _counting_sendfile(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counts: list[int] = []
    real = socket.socket.sendfile

    def counting(self: socket.socket, file: Any, offset: int = 0,
                 count: int | None = None) -> int:
        sent = real(self, file, offset, count)
        counts.append(sent)
        return sent

    monkeypatch.setattr(socket.socket, "sendfile", counting)
    return counts


def test_a_file_goes_by_the_kernel_in_pieces_and_arrives_whole(
        tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    data = bytes(range(256)) * (3 * oci_file_body.KERNEL_PIECE // 256) + b"tail"
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    counts = _counting_sendfile(monkeypatch)
    client = _client(registry)
    try:
        digest = Digest(hashlib.sha256(data).hexdigest(), len(data))
        client.push_file(registry.repository(), path, digest, path.name)
    finally:
        client.close()
    assert sum(counts) == len(data) and len(counts) == 4, counts  # 3 whole pieces and a tail
    status, stored = registry.get(f"/v2/{registry.repository()}/blobs/sha256:{digest.sha256}")
    assert status == 200 and stored == data


def test_a_file_shorter_than_judged_is_refused_by_the_kernel_path(
        tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"x" * 1000)
    counts = _counting_sendfile(monkeypatch)
    client = _client(registry)
    judged = Digest(hashlib.sha256(b"x" * 2000).hexdigest(), 2000)
    try:
        with pytest.raises(Refused) as refused:
            client.push_file(registry.repository(), path, judged, path.name)
    finally:
        client.close()
    assert counts, "the kernel path was not taken"
    assert refused.value.findings[0].code.name == "publish.integrity"
    assert "became shorter since it was checked" in str(refused.value)
    status, _ = registry.get(f"/v2/{registry.repository()}/blobs/sha256:{judged.sha256}")
    assert status == 404
