"""Registry credentials (`oci_auth`) against a hostile registry served by the test: Basic
after the registry's own challenge, Bearer tokens bought at a realm with the credentials when
the realm is the registry's own origin (a token service on another host:
tests/publish/test_oci_realms.py), every refusal saying why.

In-process and quick (judges of `nox -s mutants`); end to end through the CLI:
tests/publish/test_hostile_registry.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from horon_bundle.core.hashing import hash_bytes
from horon_bundle.publish.destinations import oci_auth
from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_auth import (
    find_credentials,
    parse_challenge,
    repository_of,
)
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.destinations.oci_http import RegistryHttp
from tests.hostile_registry import HostileRegistry, Reply, Seen, json_reply, tls_pair
from tests.transport_support import (
    BASIC,
    CREDENTIALS,
    PASSWORD,
    QUICK_CLIENT,
    REPO,
    USER,
    client_of,
    refusal,
)

PREFIX = "oci://127.0.0.1:"  # every message names the registry


@pytest.fixture(name="other_host")
def other_host_fixture() -> Iterator[HostileRegistry]:
    """Another host on 127.0.0.2, asking for the same credentials (a harvester)."""
    with HostileRegistry("127.0.0.2", credentials=(USER, PASSWORD)) as other:
        yield other


def test_basic_credentials_answer_the_registry_and_then_go_with_each_request() -> None:
    large = os.urandom(600 << 10)  # sent in several pieces
    with HostileRegistry(credentials=(USER, PASSWORD)) as registry:
        client = client_of(registry)
        assert client.push_blob(REPO, b"{}") == hash_bytes(b"{}")
        assert client.push_blob(REPO, large) == hash_bytes(large)
        assert client.get_manifest(REPO, "missing") is None
    statuses = [seen.authorization for seen in registry.seen]
    assert statuses[0] is None and set(statuses[1:]) == {BASIC}  # one challenge, then sent
    assert client.auth.headers(registry.origin + "/v2/x/manifests/t") == {"Authorization": BASIC}
    for elsewhere in ("http://127.0.0.2:%d/v2/x/manifests/t", "https://127.0.0.1:%d/v2/",
                      "http://localhost:%d/v2/"):
        assert client.auth.headers(elsewhere % registry.port) == {}


def _token_registry(realm: str, *, token: object = "tok-1",  # noqa: S107 - a test token
                    challenge: str = 'service="hostile",scope="repository:{repo}:pull,push"'
                    ) -> HostileRegistry:
    """A registry that takes only the token it issued at /token for Basic credentials."""
    def fault(seen: Seen) -> Reply | None:
        if seen.path.startswith("/broken"):
            return Reply(403)
        if seen.path.startswith("/token"):
            if seen.authorization != BASIC:
                return json_reply({"token": "anonymous"})
            return json_reply({"token": token} if token != "raw" else "not json")  # noqa: S105
        if seen.authorization == f"Bearer {token}" or seen.path == "/v2/":
            return None
        extra = challenge.format(repo=repository_of("http://h" + seen.path))
        return Reply(401, {"WWW-Authenticate": f'Bearer realm="{realm}"'
                                                + (f",{extra}" if extra else "")})
    return HostileRegistry(fault=fault)


def test_a_bearer_token_is_bought_with_credentials_at_the_registry_and_kept() -> None:
    with _token_registry("/token") as registry:
        registry_realm = registry.origin + "/token"
        client = client_of(registry)
        client.push_blob(REPO, b"{}")
        assert client.get_manifest(REPO, "t") is None
        assert client.tags("horon/other") == []
    tokens = [s for s in registry.seen if s.path.startswith("/token")]
    assert [t.authorization for t in tokens] == [BASIC, BASIC]  # one per repository
    assert tokens[0].path == "/token?service=hostile&scope=repository%3Ahoron%2Fexample%3A" \
                             "pull%2Cpush"
    assert registry_realm.endswith("/token")


@pytest.mark.parametrize(("realm", "challenge", "asked"), [
    ("/token", "", "/token"),
    ("/token?client=horon", 'scope="repository:{repo}:pull"',
     "/token?client=horon&scope=repository%3Ahoron%2Fexample%3Apull"),
])
def test_a_token_realm_is_asked_with_what_the_challenge_names(realm: str, challenge: str,
                                                              asked: str) -> None:
    with _token_registry(realm, challenge=challenge) as registry:
        assert client_of(registry).get_manifest(REPO, "t") is None
    assert [s.path for s in registry.seen if s.path.startswith("/token")] == [asked]


def test_a_token_as_long_as_allowed_is_used() -> None:
    longest = "x" * oci_auth.MAX_TOKEN_CHARS
    with _token_registry("/token", token=longest) as registry:
        assert client_of(registry).get_manifest(REPO, "t") is None


def test_without_credentials_a_token_is_asked_anonymously(tmp_path: Path) -> None:
    with _token_registry("/token") as registry:
        message = refusal("publish.auth", PREFIX, client_of(
            registry, {"DOCKER_CONFIG": str(tmp_path)}).get_manifest, REPO, "t")
    assert message.endswith(f"credentials refused for GET /v2/{REPO}/manifests/t")
    [token] = [s for s in registry.seen if s.path.startswith("/token")]
    assert token.authorization is None


def test_a_token_realm_on_another_host_is_asked_without_credentials(
        other_host: HostileRegistry) -> None:
    with _token_registry(f"{other_host.origin}/token") as registry:
        message = refusal("publish.auth", PREFIX, client_of(registry).get_manifest, REPO, "t")
    assert message.endswith(f"GET /v2/{REPO}/manifests/t: the token realm "
                            f"{other_host.origin} answered 401 to a request without credentials; "
                            "credentials go to a token service on another origin only over "
                            f"HTTPS, and {other_host.origin} is not")
    assert [s.authorization for s in other_host.seen] == [None]


@pytest.mark.parametrize("token", [None, "", "has space", "x" * (16 << 10) + "x", 7, "raw"])
def test_a_realm_answering_no_usable_token_is_refused(token: object) -> None:
    with _token_registry("/token", token=token) as registry:
        message = refusal("publish.auth", PREFIX, client_of(registry).get_manifest, REPO, "t")
    assert message.endswith("the token realm " + registry.origin + " answered no usable token")


def test_a_token_realm_that_fails_is_refused() -> None:
    with _token_registry("/broken") as registry:
        message = refusal("publish.auth", PREFIX, client_of(registry).get_manifest, REPO, "t")
    assert message.endswith(f"the token realm {registry.origin} answered 403")


def test_a_realm_that_downgrades_https_is_refused(tmp_path: Path) -> None:
    server, trust = tls_pair(tmp_path)
    fault = lambda seen: None if seen.path == "/v2/" else Reply(  # noqa: E731
        401, {"WWW-Authenticate": 'Bearer realm="http://127.0.0.1:9/token"'})
    with HostileRegistry(fault=fault, tls=server) as registry:
        address = parse_address(registry.destination())
        assert isinstance(address, OciAddress)
        http = RegistryHttp(registry.origin, display=address.display, limits=QUICK_CLIENT,
                            tls=trust)
        client = RegistryClient(address, CREDENTIALS, http=http)
        assert client.base == registry.origin
        message = refusal("publish.unsafe-location", PREFIX, client.get_manifest, REPO, "t")
    assert "token realm: the location http://127.0.0.1:9 would downgrade HTTPS" in message


@pytest.mark.parametrize(("environ", "challenge", "said"), [
    ({}, 'Basic realm="r"', "the registry asks for credentials and none were found"),
    ({"HORON_REGISTRY_USERNAME": USER}, 'Basic realm="r"',
     "only one of HORON_REGISTRY_USERNAME and HORON_REGISTRY_PASSWORD is set"),
    (CREDENTIALS, "", "401 without a Basic or Bearer challenge"),
    (CREDENTIALS, "Negotiate", "401 without a Basic or Bearer challenge"),
    (CREDENTIALS, 'Basic realm="r"', f"credentials refused for GET /v2/{REPO}/manifests/t"),
], ids=["none", "half", "no-challenge", "other-scheme", "refused"])
def test_refused_credentials_say_why(tmp_path: Path, environ: dict[str, str], challenge: str,
                                     said: str) -> None:
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    with HostileRegistry(fault=lambda _seen: Reply(401, headers)) as registry:
        client = client_of(registry, {"DOCKER_CONFIG": str(tmp_path), **environ})
        assert refusal("publish.auth", PREFIX, client.get_manifest, REPO, "t").endswith(said)


def test_credentials_come_from_the_variables_or_the_docker_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    address = parse_address("oci://registry.example:5000/ns")
    assert isinstance(address, OciAddress)
    assert find_credentials(address, CREDENTIALS).basic == BASIC.removeprefix("Basic ")
    empty = find_credentials(address, {"DOCKER_CONFIG": str(tmp_path)})
    assert (empty.basic, empty.problem) == (None, None)
    (tmp_path / "config.json").write_text(json.dumps(
        {"auths": {"registry.example:5000": {"auth": "ZG9jazpwdw=="}}}))
    assert find_credentials(address, {"DOCKER_CONFIG": str(tmp_path)}).basic == "ZG9jazpwdw=="
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the default ~/.docker/config.json
    nothing = find_credentials(address, {})
    assert (nothing.basic, nothing.problem) == (None, None)
    (tmp_path / "config.json").write_text("{not json")
    assert find_credentials(address, {"DOCKER_CONFIG": str(tmp_path)}).problem == \
        "the Docker config cannot be read"


def test_challenges_parse_as_rfc_7235_says() -> None:
    assert parse_challenge('Bearer realm="https://ghcr.io/token",service="ghcr.io",'
                           'scope="repository:a/b:pull,push"') == ("bearer", {
                               "realm": "https://ghcr.io/token", "service": "ghcr.io",
                               "scope": "repository:a/b:pull,push"})
    assert parse_challenge('BASIC realm="a \\"b\\""') == ("basic", {"realm": 'a "b"'})
    assert parse_challenge("Bearer realm=x, realm=y,Scope=s") == ("bearer",
                                                                  {"realm": "x", "scope": "s"})
    assert parse_challenge("Basic") == ("basic", {})
    assert parse_challenge('Bearer realm="x" "junk"') == ("bearer", {"realm": "x"})
    assert parse_challenge("") is None and parse_challenge(None) is None
    assert repository_of("http://h/v2/ns/x/blobs/uploads/") == "ns/x"
    assert repository_of("http://h/v2/a/b/c/manifests/t") == "a/b/c"
    assert repository_of("http://h/v2/") == repository_of("http://h/u/1") == ""
