"""`publish` and `yank` against a hostile registry served by the test itself on loopback: it
controls neither our memory, our clock nor our credentials (issue 20, part 4).

Each attack is one fault of `tests.hostile_registry`; each test asserts the code, the exit
status, one escaped line and no traceback, a wall-clock bound well under what the attack cost
before, and that nothing was written (the release directory byte-identical, no receipt, no tag
in the registry). The cases about memory run the CLI as a child and read its own peak RSS
(VmHWM); the real 20 s deadline is exercised once, by a slow test.

Measured before this layer (main 4ec6d77, same machine): a 600 MiB ping answer or error body
1,241 MiB peak RSS (and the ping case published, exit 0); a dribbling ping still waiting when
killed at 40 s; an upload Location on 127.0.0.2 got `Authorization: Basic` and exit 0; an
endless tag list 838 pages in 40 s, RSS growing. Figures after: docs/threat-model.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import BuiltExample
from tests.connect_proxy import ConnectProxy
from tests.helpers import HANG_GUARD, LATE, CliResult, cli, cli_measured, tree_snapshot
from tests.hostile_registry import (
    MIB,
    HostileRegistry,
    Reply,
    Seen,
    Store,
    dribble,
    huge,
    json_reply,
    tls_pair,
)
from tests.publish_support import make_dist, publish_env

pytestmark = pytest.mark.cargo

USER, PASSWORD = "ci", "never-elsewhere-7f3a"
CREDENTIALS = {"HORON_REGISTRY_USERNAME": USER, "HORON_REGISTRY_PASSWORD": PASSWORD}
PEAK_RSS_MIB = 120  # a publish child peaks at ~35 MiB here; 600 MiB answers cost 1,241


def _refused_cleanly(result: CliResult, code: str, dist: Path | None,
                     before: dict[str, str] | None, *, status: int = 3) -> str:
    """The one line of the refusal, after checking everything a refusal promises."""
    assert result.status == status, (result.status, result.stderr)
    assert result.codes == [code], result.stderr
    assert "Traceback" not in result.stderr and PASSWORD not in result.stdout + result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("ERROR ")]
    assert line.isprintable() and len(line) < 500, line
    if dist is not None:
        assert tree_snapshot(dist) == before
        assert not (dist / "publish-receipt.json").exists()
    return line


def _no_tags(store: Store) -> None:
    assert all(ref.startswith("sha256:") for _repo, ref in store.manifests), store.manifests


def _dist(tmp_path: Path, example: BuiltExample) -> tuple[Path, dict[str, str]]:
    dist = make_dist(tmp_path / "dist", example.archive)
    return dist, tree_snapshot(dist)


# --- memory ----------------------------------------------------------------------------------
@pytest.mark.process
@pytest.mark.parametrize("length", [True, False], ids=["with-length", "close-delimited"])
def test_a_600_mib_ping_answer_is_refused_at_its_cap(tmp_path: Path, length: bool,
                                                     example_release: BuiltExample) -> None:
    size = 600 * MIB
    fault = lambda seen: Reply(  # noqa: E731
        200, {"Content-Length": str(size)} if length else {}, huge(size)) \
        if seen.path == "/v2/" else None
    dist, before = _dist(tmp_path, example_release)
    with HostileRegistry(fault=fault) as registry:
        result = cli_measured("publish", dist, env=publish_env(registry.destination()))
    line = _refused_cleanly(result, "publish.too-large", dist, before)
    assert line.endswith("/v2/: the answer is larger than 4194304 bytes; nothing more was read")
    assert result.peak_rss_mib < PEAK_RSS_MIB, result.peak_rss_mib
    assert result.seconds < HANG_GUARD, result.seconds
    assert registry.requests("POST") == [] and registry.requests("PUT") == []


@pytest.mark.process
def test_a_600_mib_error_body_is_read_no_further_than_its_cap(
        tmp_path: Path, example_release: BuiltExample) -> None:
    fault = lambda seen: Reply(400, {}, huge(600 * MIB, b'{"errors":')) \
        if seen.method == "POST" else None  # noqa: E731
    dist, before = _dist(tmp_path, example_release)
    with HostileRegistry(fault=fault) as registry:
        result = cli_measured("publish", dist, env=publish_env(registry.destination()))
    line = _refused_cleanly(result, "publish.destination-state", dist, before)
    assert line.endswith("POST /v2/horon/example/blobs/uploads/: unexpected 400")
    assert result.peak_rss_mib < PEAK_RSS_MIB, result.peak_rss_mib
    assert result.seconds < HANG_GUARD, result.seconds
    _no_tags(registry.store)


# --- the clock -------------------------------------------------------------------------------
@pytest.mark.process
@pytest.mark.slow
def test_a_registry_dribbling_a_byte_a_second_is_given_up_within_20_s(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """The real deadline, end to end: 20 s for the ping, whatever the server dribbles."""
    body = b"{" + b" " * 99_998 + b"}"
    fault = lambda seen: Reply(200, {"Content-Length": str(len(body))}, dribble(body)) \
        if seen.path == "/v2/" else None  # noqa: E731
    dist, before = _dist(tmp_path, example_release)
    with HostileRegistry(fault=fault) as registry:
        result = cli_measured("publish", dist, env=publish_env(registry.destination()))
    line = _refused_cleanly(result, "publish.deadline", dist, before)
    assert line.endswith("GET /v2/: no complete answer within 20 s")
    assert 20 <= result.seconds < 28 + LATE, result.seconds
    assert result.peak_rss_mib < PEAK_RSS_MIB


def test_500s_are_retried_three_times_and_said(tmp_path: Path,
                                               example_release: BuiltExample) -> None:
    fault = lambda seen: Reply(500) if "/manifests/0.1.0__" in seen.path else None  # noqa: E731
    dist, before = _dist(tmp_path, example_release)
    with HostileRegistry(fault=fault) as registry:
        started = time.monotonic()
        result = cli("publish", dist, env=publish_env(registry.destination()))
        took = time.monotonic() - started
    line = _refused_cleanly(result, "publish.destination-state", dist, before)
    assert line.endswith("manifests/0.1.0__x86_64-unknown-linux-gnu: unexpected 500 "
                         "(3 attempts)")
    notes = [n for n in result.stderr.splitlines() if n.startswith("note:")]
    assert [n.rsplit(": ", 1)[1] for n in notes] == ["500; attempt 2 of 3 in 0.5 s",
                                                     "500; attempt 3 of 3 in 2 s"]
    assert len([s for s in registry.seen if "/manifests/0.1.0__" in s.path]) == 3
    assert 2.5 <= took < 10 + LATE
    _no_tags(registry.store)


# --- credentials -----------------------------------------------------------------------------
def test_credentials_never_reach_an_upload_location_on_another_host(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """A harvester on 127.0.0.2 asking for the same credentials: it gets none, publish refuses."""
    dist, before = _dist(tmp_path, example_release)
    store = Store()
    with HostileRegistry("127.0.0.2", store=store, credentials=(USER, PASSWORD)) as other, \
            HostileRegistry(store=store, credentials=(USER, PASSWORD),
                            upload_origin=other.origin) as registry:
        result = cli("publish", dist, env={**publish_env(registry.destination()), **CREDENTIALS})
    line = _refused_cleanly(result, "publish.auth", dist, before)
    assert line.endswith(f"DELETE /u/1: {other.origin} asks for credentials; they are only ever "
                         f"sent to the registry itself ({registry.origin})")
    assert [s.authorization for s in other.seen] == [None]
    assert all(s.authorization in (None, f"Basic {_basic()}") for s in registry.seen)
    assert store.blobs == {} and store.manifests == {}


def test_an_upload_location_on_another_host_is_used_without_credentials(
        tmp_path: Path, example_release: BuiltExample) -> None:
    dist = make_dist(tmp_path / "dist", example_release.archive)
    store = Store()
    with HostileRegistry("127.0.0.2", store=store) as other, \
            HostileRegistry(store=store, credentials=(USER, PASSWORD),
                            upload_origin=other.origin) as registry:
        result = cli("publish", dist, "--json",
                     env={**publish_env(registry.destination()), **CREDENTIALS})
    assert result.status == 0, result.stderr
    assert [b["status"] for b in result.json()["bundles"]] == ["published"]
    assert {s.method for s in other.seen} == {"PUT", "DELETE"}
    assert [s.authorization for s in other.seen] == [None] * len(other.seen)
    assert PASSWORD not in result.stdout + result.stderr


def test_a_registry_behind_a_proxy_is_published_to_through_its_tunnel(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """`registry.test` is a name only the proxy resolves; the registry speaks HTTPS with a
    test CA (SSL_CERT_FILE); the proxy and the registry each ask for their own credentials."""
    server, _trust = tls_pair(tmp_path, "registry.test")
    dist = make_dist(tmp_path / "dist", example_release.archive)
    with HostileRegistry(tls=server, credentials=(USER, PASSWORD)) as registry, \
            ConnectProxy({"registry.test": "127.0.0.1"}, credentials=("px", "px-pw")) as proxy:
        env = {**publish_env(f"oci://registry.test:{registry.port}/horon"), **CREDENTIALS,
               "HTTPS_PROXY": proxy.url("px", "px-pw"), "NO_PROXY": "localhost,127.0.0.1",
               "SSL_CERT_FILE": str(tmp_path / "registry.crt")}
        result = cli("publish", dist, "--json", env=env)
    assert result.status == 0, result.stderr
    assert [b["status"] for b in result.json()["bundles"]] == ["published"]
    assert {(s.method, s.target) for s in proxy.seen} == {("CONNECT",
                                                           f"registry.test:{registry.port}")}
    assert PASSWORD.encode() not in proxy.carried and b"px-pw" not in proxy.carried
    assert all("proxy-authorization" not in s.headers for s in registry.seen)
    assert {s.authorization for s in registry.seen} == {None, f"Basic {_basic()}"}
    assert registry.store.tags("horon/example") != []


def test_a_registry_delegating_to_a_token_service_on_another_host_needs_it_named(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """Docker Hub's and GitLab's shape: the registry's 401 names a token realm on another
    host (127.0.0.2, HTTPS with a test CA); the credentials go there only once
    HORON_REGISTRY_TOKEN_HOSTS names it."""
    server, _trust = tls_pair(tmp_path, "127.0.0.2")
    dist, before = _dist(tmp_path, example_release)

    def issue(seen: Seen) -> Reply:
        return json_reply({"token": "tok-9"}) if seen.authorization == f"Basic {_basic()}" \
            else Reply(401)

    with HostileRegistry("127.0.0.2", tls=server, fault=issue) as service:
        realm = f'Bearer realm="{service.origin}/token",service="test"'
        fault = lambda seen: None if seen.authorization == "Bearer tok-9" \
            or seen.path == "/v2/" else Reply(401, {"WWW-Authenticate": realm})  # noqa: E731
        with HostileRegistry(fault=fault) as registry:
            env = {**publish_env(registry.destination()), **CREDENTIALS,
                   "SSL_CERT_FILE": str(tmp_path / "registry.crt")}
            refused = cli("publish", dist, env=env)
            line = _refused_cleanly(refused, "publish.auth", dist, before)
            assert line.endswith("(HORON_REGISTRY_TOKEN_HOSTS=127.0.0.2 would allow 127.0.0.2)")
            assert {s.authorization for s in service.seen} == {None}
            published = cli("publish", dist, "--json",
                            env={**env, "HORON_REGISTRY_TOKEN_HOSTS": "127.0.0.2"})
    assert published.status == 0, published.stderr
    assert [b["status"] for b in published.json()["bundles"]] == ["published"]
    assert {s.authorization for s in service.seen} == {None, f"Basic {_basic()}"}
    assert {s.authorization for s in registry.seen} <= {None, "Bearer tok-9"}
    assert PASSWORD not in published.stdout + published.stderr


@pytest.mark.parametrize("location", ["http://registry.invalid/u/1", "file:///etc/passwd"])
def test_an_upload_location_that_is_not_safe_is_refused(tmp_path: Path, location: str,
                                                        example_release: BuiltExample) -> None:
    fault = lambda seen: Reply(202, {"Location": location}) \
        if seen.method == "POST" else None  # noqa: E731
    dist, before = _dist(tmp_path, example_release)
    with HostileRegistry(fault=fault) as registry:
        result = cli("publish", dist, env=publish_env(registry.destination()))
    line = _refused_cleanly(result, "publish.unsafe-location", dist, before)
    assert "POST /v2/horon/example/blobs/uploads/: the location " in line
    assert line.endswith("; nothing was sent there")
    assert [s.method for s in registry.seen if s.method != "GET"] == ["POST"]


# --- integrity and the tag list ------------------------------------------------------------
def test_a_blob_answering_the_wrong_digest_is_integrity(tmp_path: Path,
                                                        example_release: BuiltExample) -> None:
    wrong = "sha256:" + "e" * 64
    stored: list[str] = []

    def fault(seen: Seen) -> Reply | None:
        if seen.method == "PUT" and "/blobs/uploads/" in seen.path:
            stored.append(seen.path)
        if seen.method == "HEAD" and stored:
            return Reply(200, {"Docker-Content-Digest": wrong, "Content-Length": "1"})
        return None

    dist, before = _dist(tmp_path, example_release)
    with HostileRegistry(fault=fault) as registry:
        result = cli("publish", dist, env=publish_env(registry.destination()))
    line = _refused_cleanly(result, "publish.integrity", dist, before)
    assert f"answers digest {wrong}, 1 bytes; expected" in line
    _no_tags(registry.store)


@pytest.mark.process
def test_an_endless_tag_list_stops_at_100_pages(tmp_path: Path) -> None:
    pages: list[int] = []

    def fault(seen: Seen) -> Reply | None:
        if "/tags/list" not in seen.path:
            return None
        pages.append(len(pages) + 1)
        return json_reply({"name": "horon/example",
                           "tags": [f"0.{len(pages)}.{i}__t" for i in range(1000)]},
                          Link=f'</v2/horon/example/tags/list?n=1000&last=p{len(pages)}>; '
                               'rel="next"')

    with HostileRegistry(fault=fault) as registry:
        result = cli_measured("yank", "example", "0.1.0", "--reason", "broken",
                           env=publish_env(registry.destination()))
    line = _refused_cleanly(result, "publish.tag-limit", None, None)
    assert line.endswith("/v2/horon/example/tags/list: more than 100 pages; nothing was changed")
    assert len(pages) == 100
    assert result.seconds < HANG_GUARD, result.seconds
    assert result.peak_rss_mib < PEAK_RSS_MIB, result.peak_rss_mib
    assert {s.method for s in registry.seen} == {"GET"}
    assert registry.store.manifests == {}


def _basic() -> str:
    import base64  # noqa: PLC0415 - only here

    return base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
