"""The OCI naming rules and destination addresses, as documented in docs/publishing.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core import identifiers
from horon_bundle.core.errors import Refused
from horon_bundle.publish.destinations.interface import FileAddress, OciAddress, parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.destinations.oci_layout import (
    MAX_TAG,
    TAG,
    naming_problem,
    parse_version_tag,
    version_tag,
    yank_tag,
)

_IDENT = st.from_regex(r"[0-9A-Za-z-]{1,6}", fullmatch=True)
_NUMBER = st.integers(min_value=0, max_value=10**6).map(str)
SEMVERS = st.builds(
    lambda core, pre, build: ".".join(core) + (f"-{'.'.join(pre)}" if pre else "")
    + (f"+{'.'.join(build)}" if build else ""),
    st.lists(_NUMBER, min_size=3, max_size=3),
    st.lists(_IDENT, max_size=3), st.lists(_IDENT, max_size=3),
).filter(lambda v: identifiers.SEMVER.match(v) is not None)
TARGETS = st.from_regex(r"[a-z0-9_]{1,8}(-[a-z0-9_.]{1,8}){2,3}", fullmatch=True)


@pytest.mark.slow
@given(SEMVERS, TARGETS, SEMVERS, TARGETS)
def test_version_tags_are_injective_and_valid(version: str, target: str, other_version: str,
                                              other_target: str) -> None:
    tag = version_tag(version, target)
    assert parse_version_tag(tag) == (version, target)
    if (version, target) != (other_version, other_target):
        assert version_tag(other_version, other_target) != tag
    if len(tag) <= MAX_TAG:
        assert TAG.match(tag) and TAG.match(yank_tag(tag))
        assert parse_version_tag(yank_tag(tag)) is None


def test_tag_examples() -> None:
    assert version_tag("0.1.0", "x86_64-unknown-linux-gnu") == "0.1.0__x86_64-unknown-linux-gnu"
    assert version_tag("1.2.3-rc.1+build.5", "aarch64-apple-darwin") == (
        "1.2.3-rc.1_build.5__aarch64-apple-darwin")
    assert naming_problem("example", "1.0.0-" + "a" * 120, "x86_64-unknown-linux-gnu")
    assert naming_problem("ends-", "1.0.0", "x86_64-unknown-linux-gnu")
    assert naming_problem("example", "1.0.0", "x86_64-unknown-linux-gnu") is None


def test_addresses() -> None:
    assert parse_address("file:///srv/plugins") == FileAddress(root=Path("/srv/plugins"))
    assert parse_address("file:///srv/my%20plugins") == FileAddress(
        root=Path("/srv/my plugins"))
    ghcr = parse_address("oci://ghcr.io/acme/plugins")
    assert ghcr == OciAddress(host="ghcr.io", port=None, namespace="acme/plugins",
                              loopback=False)
    local = parse_address("oci://127.0.0.1:5000/ns")
    assert isinstance(local, OciAddress) and local.loopback and local.registry == "127.0.0.1:5000"
    six = parse_address("oci://[::1]:5000/ns")
    assert isinstance(six, OciAddress) and six.loopback and six.registry == "[::1]:5000"
    named = parse_address("oci://localhost:5000/ns")
    assert isinstance(named, OciAddress) and named.loopback
    assert not parse_address("oci://10.0.0.1:5000/ns").loopback  # type: ignore[union-attr]


def test_plain_http_only_for_loopback() -> None:
    remote = parse_address("oci://registry.example:5000/ns")
    local = parse_address("oci://127.0.0.1:5000/ns")
    assert isinstance(remote, OciAddress) and isinstance(local, OciAddress)
    assert RegistryClient(remote, {}).base == "https://registry.example:5000"
    assert RegistryClient(local, {}).base == "http://127.0.0.1:5000"


def test_half_credentials_are_a_refusal_when_asked_for() -> None:
    address = parse_address("oci://registry.example/ns")
    assert isinstance(address, OciAddress)
    client = RegistryClient(address, {"HORON_REGISTRY_USERNAME": "ci"})
    assert client.credential_problem is not None
    assert "HORON_REGISTRY_PASSWORD" in client.credential_problem


@pytest.mark.parametrize("value", ["oci://u:p@h/ns", "oci://h/ns#f", "https://h/ns", ""])
def test_refused_addresses(value: str) -> None:
    with pytest.raises(Refused) as refused:
        parse_address(value)
    assert refused.value.codes() == ["publish.destination"]
    assert ":p@" not in str(refused.value)
