"""The registry client's requests against a hostile registry served by the test: upload
locations (and the credentials they never get), a bounded tag list, wrong digests, the
registry's words shown escaped, retries said, the blob deadline.

In-process and quick (judges of `nox -s mutants` for the transport as the client uses it);
end to end through the CLI: tests/publish/test_hostile_registry.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from horon_bundle.publish.destinations import oci_client
from horon_bundle.publish.destinations.oci_client import next_link
from horon_bundle.publish.destinations.oci_deadline import Limits
from tests.hostile_registry import HostileRegistry, Reply, Seen, error_reply
from tests.transport_support import PASSWORD, REPO, USER, client_of, refusal

PREFIX = "oci://127.0.0.1:"  # every message names the registry


@pytest.fixture(name="other_host")
def other_host_fixture() -> Iterator[HostileRegistry]:
    """Another host on 127.0.0.2, asking for the same credentials (a harvester)."""
    with HostileRegistry("127.0.0.2", credentials=(USER, PASSWORD)) as other:
        yield other


# --- upload locations ------------------------------------------------------------------------


def test_an_upload_location_on_another_host_gets_no_credentials(
        other_host: HostileRegistry) -> None:
    with HostileRegistry(credentials=(USER, PASSWORD), store=other_host.store,
                         upload_origin=other_host.origin) as registry:
        client = client_of(registry)
        message = refusal("publish.auth", PREFIX, client.push_blob, REPO, b"{}")
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
        client = client_of(registry)
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
        client_of(registry, {}).push_blob(REPO, b"[]")
    [put] = [s for s in registry.seen if s.method == "PUT"]
    assert put.path.startswith(f"/v2/{REPO}/blobs/uploads/1?_state=s&digest=sha256:")


@pytest.mark.parametrize("location", ["http://registry.invalid/u/1", "ftp://127.0.0.1/u/1"])
def test_an_unsafe_upload_location_is_refused(location: str) -> None:
    fault = lambda seen: Reply(202, {"Location": location}) if seen.method == "POST" else None  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        message = refusal("publish.unsafe-location", PREFIX, client_of(registry).push_blob,
                          REPO, b"{}")
        assert f"POST /v2/{REPO}/blobs/uploads/: the location" in message
        assert [s.method for s in registry.seen] == ["HEAD", "POST"]


# --- the tag list: bounded -------------------------------------------------------------------


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
        assert len(client_of(registry).tags(REPO)) == 100
    with _paged(101) as registry:
        message = refusal("publish.tag-limit", PREFIX, client_of(registry).tags, REPO)
        assert len(registry.seen) == 100
    assert message.endswith(f"/v2/{REPO}/tags/list: more than 100 pages; nothing was changed")


def test_a_tag_list_of_100000_tags_is_read_and_one_more_is_refused() -> None:
    assert oci_client.MAX_TAGS == 100_000
    with _paged(2, 50_000) as registry:
        assert len(client_of(registry).tags(REPO)) == 100_000
    with _paged(3, 50_000) as registry:
        message = refusal("publish.tag-limit", PREFIX, client_of(registry).tags, REPO)
        assert len(registry.seen) == 3
    assert message.endswith("more than 100000 tags; nothing was changed")


def test_a_next_page_on_another_origin_is_refused(other_host: HostileRegistry) -> None:
    with _paged(5, link=other_host.origin + "/v2/{repo}/tags/list?last={n}") as registry:
        message = refusal("publish.unsafe-location", PREFIX, client_of(registry).tags, REPO)
    assert message.endswith(f"next page: {other_host.origin} is not the registry")
    assert other_host.seen == []


def test_a_tag_page_that_is_not_json_is_destination_state() -> None:
    fault = lambda seen: Reply(200, {}, b"<html>") if "/tags/" in seen.path else None  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        refusal("publish.destination-state", PREFIX, client_of(registry).tags, REPO)


def test_next_links_are_read_from_the_link_header() -> None:
    assert next_link('</v2/x/tags/list?last=a&n=1000>; rel="next"') == \
        "/v2/x/tags/list?last=a&n=1000"
    assert next_link('<https://h/a>; rel="prev", <https://h/b>; rel=next') == "https://h/b"
    assert next_link('<https://h/a>; title="x"; REL="Next"') == "https://h/a"
    assert next_link('<https://h/a>; rel="prev"') is None
    assert next_link(None) is None and next_link("") is None


# --- digests, errors, retries ----------------------------------------------------------------


def test_a_blob_answering_another_digest_is_integrity() -> None:
    wrong = "sha256:" + "0" * 64

    def fault(seen: Seen) -> Reply | None:
        if seen.method == "HEAD":
            return Reply(200, {"Docker-Content-Digest": wrong, "Content-Length": "2"}, b"")
        return None

    with HostileRegistry(fault=fault) as registry:
        message = refusal("publish.integrity", PREFIX, client_of(registry).push_blob, REPO, b"{}")
    assert f"answers digest {wrong}, 2 bytes; expected 2 bytes" in message


def test_an_upload_stored_under_another_digest_is_integrity() -> None:
    def fault(seen: Seen) -> Reply | None:
        if seen.method == "PUT":
            return Reply(201, {"Docker-Content-Digest": "sha256:\x1b[31mevil"})
        return None

    with HostileRegistry(fault=fault) as registry:
        message = refusal("publish.integrity", PREFIX, client_of(registry).push_blob, REPO, b"{}")
    assert "stored the upload as sha256:\\x1b[31mevil" in message


def test_the_registrys_error_is_shown_escaped_and_short() -> None:
    fault = lambda _seen: error_reply(400, "BAD\n", "m\u202e" * 500)  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        message = refusal("publish.destination-state", PREFIX, client_of(registry).get_manifest,
                           REPO, "t")
    assert "unexpected 400 BAD\\x0a: m\\u202em" in message
    assert message.endswith("…") and len(message) < 320


@pytest.mark.parametrize(("status", "code"), [(500, "publish.destination-state"),
                                              (503, "publish.unreachable")])
def test_server_errors_are_retried_said_and_counted(status: int, code: str) -> None:
    said: list[str] = []
    with HostileRegistry(fault=lambda _seen: Reply(status)) as registry:
        message = refusal(code, PREFIX, client_of(registry, said=said).get_manifest, REPO, "t")
        assert len(registry.seen) == 3
    assert f"GET /v2/{REPO}/manifests/t: " in message and f"{status} (3 attempts)" in message
    assert len(said) == 2 and said[0].endswith(f": {status}; attempt 2 of 3 in 0.01 s")


def test_a_ping_that_is_not_a_registry_or_too_large() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(404)) as registry:
        [finding] = client_of(registry).ping()
        assert finding.message.endswith("GET /v2/ answered 404: not an OCI registry")
    with HostileRegistry(fault=lambda _seen: Reply(200, {}, b" " * (5 << 20))) as registry:
        [finding] = client_of(registry).ping()
        assert finding.code.name == "publish.too-large"
    with HostileRegistry(fault=lambda _seen: Reply(401)) as registry:
        assert client_of(registry).ping() == []


def test_a_blob_upload_has_the_blob_deadline() -> None:
    """The PUT of a blob may take longer than a small request: its own deadline."""
    def fault(seen: Seen) -> Reply | None:
        if seen.method == "PUT":
            time.sleep(0.6)
        return None

    limits = Limits(small=0.4, blob=1.5, connect=1.0, idle=1.0, retry_delays=())
    with HostileRegistry(fault=fault) as registry:
        client = client_of(registry, limits=limits)
        client.push_blob(REPO, b"{}")
        refusal("publish.deadline", PREFIX, client.put_manifest, REPO, "t", b"{}")
