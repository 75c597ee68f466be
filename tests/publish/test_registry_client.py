"""The registry client's requests against a hostile registry served by the test: credentials
only for the registry's origin (Basic, and Bearer tokens from a realm), upload locations, a
bounded tag list, wrong digests, the registry's words shown escaped, retries said.

In-process and quick (the judges of `nox -s mutants` for `oci_auth` and the client's use of
the transport); end to end through the CLI: tests/publish/test_hostile_registry.py.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.publish.destinations import oci_auth, oci_client
from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_auth import (
    find_credentials,
    parse_challenge,
    repository_of,
)
from horon_bundle.publish.destinations.oci_client import RegistryClient, next_link
from horon_bundle.publish.destinations.oci_deadline import Limits
from horon_bundle.publish.destinations.oci_http import RegistryHttp
from tests.hostile_registry import (
    HostileRegistry,
    Reply,
    Seen,
    error_reply,
    json_reply,
    tls_pair,
)

QUICK = Limits(small=2.0, blob=2.0, connect=1.0, idle=1.0, retry_delays=(0.01, 0.02))
USER, PASSWORD = "ci", "pa55-word"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
CREDENTIALS = {"HORON_REGISTRY_USERNAME": USER, "HORON_REGISTRY_PASSWORD": PASSWORD}
REPO = "horon/example"


def _client(registry: HostileRegistry, environ: dict[str, str] | None = None,
            limits: Limits = QUICK, said: list[str] | None = None) -> RegistryClient:
    address = parse_address(registry.destination())
    assert isinstance(address, OciAddress)
    http = RegistryHttp(registry.origin, display=address.display, limits=limits,
                        on_retry=None if said is None else said.append)
    return RegistryClient(address, CREDENTIALS if environ is None else environ, http=http)


def _refused(code: str, call: object, *args: object) -> str:
    with pytest.raises(Refused) as refused:
        call(*args)  # type: ignore[operator]
    assert refused.value.codes() == [code], refused.value
    [finding] = refused.value.findings
    assert finding.message.startswith("oci://127.0.0.1:"), finding.message
    assert "\n" not in finding.message and PASSWORD not in finding.message
    return finding.message


@pytest.fixture(name="other_host")
def other_host_fixture() -> Iterator[HostileRegistry]:
    with HostileRegistry("127.0.0.2", credentials=(USER, PASSWORD)) as other:
        yield other


# --- credentials: the registry's origin only ---------------------------------------------------
def test_basic_credentials_answer_the_registry_and_then_go_with_each_request() -> None:
    large = os.urandom(600 << 10)  # sent in several pieces
    with HostileRegistry(credentials=(USER, PASSWORD)) as registry:
        client = _client(registry)
        assert client.push_blob(REPO, b"{}") == hash_bytes(b"{}")
        assert client.push_blob(REPO, large) == hash_bytes(large)
        assert client.get_manifest(REPO, "missing") is None
    statuses = [seen.authorization for seen in registry.seen]
    assert statuses[0] is None and set(statuses[1:]) == {BASIC}  # one challenge, then sent
    assert client.auth.headers(registry.origin + "/v2/x/manifests/t") == {"Authorization": BASIC}
    for elsewhere in ("http://127.0.0.2:%d/v2/x/manifests/t", "https://127.0.0.1:%d/v2/",
                      "http://localhost:%d/v2/"):
        assert client.auth.headers(elsewhere % registry.port) == {}


def test_an_upload_location_on_another_host_gets_no_credentials(
        other_host: HostileRegistry) -> None:
    with HostileRegistry(credentials=(USER, PASSWORD), store=other_host.store,
                         upload_origin=other_host.origin) as registry:
        client = _client(registry)
        message = _refused("publish.auth", client.push_blob, REPO, b"{}")
        findings = client.check_push(REPO)
    assert message.endswith(f"PUT /u/1: {other_host.origin} asks for credentials; they are only "
                            f"ever sent to the registry itself ({registry.origin})")
    assert [f.code.name for f in findings] == ["publish.auth"]
    assert [(s.method, s.authorization) for s in other_host.seen] == [("PUT", None),
                                                                       ("DELETE", None)]


def test_an_upload_location_on_another_host_that_asks_nothing_is_used_without_credentials(
        ) -> None:
    with HostileRegistry("127.0.0.2") as other, \
            HostileRegistry(credentials=(USER, PASSWORD), store=other.store,
                            upload_origin=other.origin) as registry:
        client = _client(registry)
        digest = client.push_blob(REPO, b'{"a":1}')
        assert other.store.blobs["sha256:" + digest.sha256] == b'{"a":1}'
    assert [s.authorization for s in other.seen] == [None]
    assert [s.path.split("?")[0] for s in other.seen] == ["/u/1"]


def test_an_upload_location_is_resolved_against_the_post() -> None:
    def fault(seen: Seen) -> Reply | None:
        if seen.method == "POST":
            return Reply(202, {"Location": registry.store.new_session(REPO) + "?_state=s"})
        return None

    with HostileRegistry(fault=fault) as registry:
        _client(registry, {}).push_blob(REPO, b"[]")
    [put] = [s for s in registry.seen if s.method == "PUT"]
    assert put.path.startswith(f"/v2/{REPO}/blobs/uploads/1?_state=s&digest=sha256:")


@pytest.mark.parametrize("location", ["http://registry.invalid/u/1", "ftp://127.0.0.1/u/1"])
def test_an_unsafe_upload_location_is_refused(location: str) -> None:
    fault = lambda seen: Reply(202, {"Location": location}) if seen.method == "POST" else None  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        message = _refused("publish.unsafe-location", _client(registry).push_blob, REPO, b"{}")
        assert f"POST /v2/{REPO}/blobs/uploads/: the location" in message
        assert [s.method for s in registry.seen] == ["HEAD", "POST"]


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
        client = _client(registry)
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
        assert _client(registry).get_manifest(REPO, "t") is None
    assert [s.path for s in registry.seen if s.path.startswith("/token")] == [asked]


def test_a_token_as_long_as_allowed_is_used() -> None:
    longest = "x" * oci_auth.MAX_TOKEN_CHARS
    with _token_registry("/token", token=longest) as registry:
        assert _client(registry).get_manifest(REPO, "t") is None


def test_without_credentials_a_token_is_asked_anonymously(tmp_path: Path) -> None:
    with _token_registry("/token") as registry:
        message = _refused("publish.auth", _client(
            registry, {"DOCKER_CONFIG": str(tmp_path)}).get_manifest, REPO, "t")
    assert message.endswith(f"credentials refused for GET /v2/{REPO}/manifests/t")
    [token] = [s for s in registry.seen if s.path.startswith("/token")]
    assert token.authorization is None


def test_a_token_realm_on_another_host_is_asked_without_credentials(
        other_host: HostileRegistry) -> None:
    with _token_registry(f"{other_host.origin}/token") as registry:
        message = _refused("publish.auth", _client(registry).get_manifest, REPO, "t")
    assert message.endswith(f"GET /v2/{REPO}/manifests/t: the token realm "
                            f"{other_host.origin} answered 401")
    assert [s.authorization for s in other_host.seen] == [None]


@pytest.mark.parametrize("token", [None, "", "has space", "x" * (16 << 10) + "x", 7, "raw"])
def test_a_realm_answering_no_usable_token_is_refused(token: object) -> None:
    with _token_registry("/token", token=token) as registry:
        message = _refused("publish.auth", _client(registry).get_manifest, REPO, "t")
    assert message.endswith("the token realm " + registry.origin + " answered no usable token")


def test_a_token_realm_that_fails_is_refused() -> None:
    with _token_registry("/broken") as registry:
        message = _refused("publish.auth", _client(registry).get_manifest, REPO, "t")
    assert message.endswith(f"the token realm {registry.origin} answered 403")


def test_a_realm_that_downgrades_https_is_refused(tmp_path: Path) -> None:
    server, trust = tls_pair(tmp_path)
    fault = lambda seen: None if seen.path == "/v2/" else Reply(  # noqa: E731
        401, {"WWW-Authenticate": 'Bearer realm="http://127.0.0.1:9/token"'})
    with HostileRegistry(fault=fault, tls=server) as registry:
        address = parse_address(registry.destination())
        assert isinstance(address, OciAddress)
        http = RegistryHttp(registry.origin, display=address.display, limits=QUICK, tls=trust)
        client = RegistryClient(address, CREDENTIALS, http=http)
        assert client.base == registry.origin
        message = _refused("publish.unsafe-location", client.get_manifest, REPO, "t")
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
        client = _client(registry, {"DOCKER_CONFIG": str(tmp_path), **environ})
        assert _refused("publish.auth", client.get_manifest, REPO, "t").endswith(said)


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


# --- the tag list: bounded --------------------------------------------------------------------
def _paged(pages: int, per_page: int = 1, link: str = "/v2/{repo}/tags/list?last={n}") -> \
        HostileRegistry:
    def fault(seen: Seen) -> Reply | None:
        if "/tags/list" not in seen.path:
            return None
        number = int(seen.path.partition("last=")[2] or 0) + 1
        headers = {} if number >= pages else {
            "Link": f'<{link.format(repo=REPO, n=number)}>; rel="next"'}
        return Reply(200, headers, json.dumps(
            {"name": REPO, "tags": [f"t{number}-{i}" for i in range(per_page)]}).encode())
    return HostileRegistry(fault=fault)


def test_a_tag_list_of_100_pages_is_read_and_one_more_page_is_refused() -> None:
    assert oci_client.MAX_TAG_PAGES == 100
    with _paged(100) as registry:
        assert len(_client(registry).tags(REPO)) == 100
    with _paged(101) as registry:
        message = _refused("publish.tag-limit", _client(registry).tags, REPO)
        assert len(registry.seen) == 100
    assert message.endswith(f"/v2/{REPO}/tags/list: more than 100 pages; nothing was changed")


def test_a_tag_list_of_100000_tags_is_read_and_one_more_is_refused() -> None:
    assert oci_client.MAX_TAGS == 100_000
    with _paged(2, 50_000) as registry:
        assert len(_client(registry).tags(REPO)) == 100_000
    with _paged(3, 50_000) as registry:
        message = _refused("publish.tag-limit", _client(registry).tags, REPO)
        assert len(registry.seen) == 3
    assert message.endswith("more than 100000 tags; nothing was changed")


def test_a_next_page_on_another_origin_is_refused(other_host: HostileRegistry) -> None:
    with _paged(5, link=other_host.origin + "/v2/{repo}/tags/list?last={n}") as registry:
        message = _refused("publish.unsafe-location", _client(registry).tags, REPO)
    assert message.endswith(f"next page: {other_host.origin} is not the registry")
    assert other_host.seen == []


def test_a_tag_page_that_is_not_json_is_destination_state() -> None:
    fault = lambda seen: Reply(200, {}, b"<html>") if "/tags/" in seen.path else None  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        _refused("publish.destination-state", _client(registry).tags, REPO)


def test_next_links_are_read_from_the_link_header() -> None:
    assert next_link('</v2/x/tags/list?last=a&n=1000>; rel="next"') == \
        "/v2/x/tags/list?last=a&n=1000"
    assert next_link('<https://h/a>; rel="prev", <https://h/b>; rel=next') == "https://h/b"
    assert next_link('<https://h/a>; title="x"; REL="Next"') == "https://h/a"
    assert next_link('<https://h/a>; rel="prev"') is None
    assert next_link(None) is None and next_link("") is None


# --- digests, errors, retries ---------------------------------------------------------------
def test_a_blob_answering_another_digest_is_integrity() -> None:
    wrong = "sha256:" + "0" * 64

    def fault(seen: Seen) -> Reply | None:
        if seen.method == "HEAD":
            return Reply(200, {"Docker-Content-Digest": wrong, "Content-Length": "2"}, b"")
        return None

    with HostileRegistry(fault=fault) as registry:
        message = _refused("publish.integrity", _client(registry).push_blob, REPO, b"{}")
    assert f"answers digest {wrong}, 2 bytes; expected 2 bytes" in message


def test_an_upload_stored_under_another_digest_is_integrity() -> None:
    def fault(seen: Seen) -> Reply | None:
        if seen.method == "PUT":
            return Reply(201, {"Docker-Content-Digest": "sha256:\x1b[31mevil"})
        return None

    with HostileRegistry(fault=fault) as registry:
        message = _refused("publish.integrity", _client(registry).push_blob, REPO, b"{}")
    assert "stored the upload as sha256:\\x1b[31mevil" in message


def test_the_registrys_error_is_shown_escaped_and_short() -> None:
    fault = lambda _seen: error_reply(400, "BAD\n", "m\u202e" * 500)  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        message = _refused("publish.destination-state", _client(registry).get_manifest,
                           REPO, "t")
    assert "unexpected 400 BAD\\x0a: m\\u202em" in message
    assert message.endswith("…") and len(message) < 320


@pytest.mark.parametrize(("status", "code"), [(500, "publish.destination-state"),
                                              (503, "publish.unreachable")])
def test_server_errors_are_retried_said_and_counted(status: int, code: str) -> None:
    said: list[str] = []
    with HostileRegistry(fault=lambda _seen: Reply(status)) as registry:
        message = _refused(code, _client(registry, said=said).get_manifest, REPO, "t")
        assert len(registry.seen) == 3
    assert f"GET /v2/{REPO}/manifests/t: " in message and f"{status} (3 attempts)" in message
    assert len(said) == 2 and said[0].endswith(f": {status}; attempt 2 of 3 in 0.01 s")


def test_a_ping_that_is_not_a_registry_or_too_large() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(404)) as registry:
        [finding] = _client(registry).ping()
        assert finding.message.endswith("GET /v2/ answered 404: not an OCI registry")
    with HostileRegistry(fault=lambda _seen: Reply(200, {}, b" " * (5 << 20))) as registry:
        [finding] = _client(registry).ping()
        assert finding.code.name == "publish.too-large"
    with HostileRegistry(fault=lambda _seen: Reply(401)) as registry:
        assert _client(registry).ping() == []


def test_a_blob_upload_has_the_blob_deadline() -> None:
    """The PUT of a blob may take longer than a small request: its own deadline."""
    def fault(seen: Seen) -> Reply | None:
        if seen.method == "PUT":
            time.sleep(0.6)
        return None

    limits = Limits(small=0.4, blob=1.5, connect=1.0, idle=1.0, retry_delays=())
    with HostileRegistry(fault=fault) as registry:
        client = _client(registry, limits=limits)
        client.push_blob(REPO, b"{}")
        _refused("publish.deadline", client.put_manifest, REPO, "t", b"{}")
