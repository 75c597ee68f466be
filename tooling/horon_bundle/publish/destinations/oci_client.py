"""A small OCI distribution client: the requests publishing and yanking make.

Every request goes through `oci_http` (one deadline, capped bodies, our own redirects and
locations, bounded retries, credentials for the registry's origin only) with the headers
`oci_auth` gives; this module adds what publishing needs and oras's `push` lacks: manifests
written byte for byte (with `artifactType`), blobs streamed from their file and never held
whole (a 1 GiB archive never sits in memory), every answer checked, a bounded tag list, and
every transport failure turned into a refusal. Credentials are never logged: messages name
the registry, the path and the HTTP status, nothing else.

A blob is uploaded monolithically: `POST /blobs/uploads/` opens a session, one `PUT
<location>?digest=` carries the whole body with its `Content-Length` (the form every
registry supports, GHCR and distribution included; chunked `PATCH` costs a round trip per
chunk and buys only resumption, which a re-run gives anyway). The registry recomputes the
digest of what it received and refuses a difference; the client confirms the stored blob by
`HEAD` (digest and size). The archive is hashed once, by preflight; nothing is read back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.strictjson import read_json
from horon_bundle.publish.destinations.interface import OciAddress
from horon_bundle.publish.destinations.oci_auth import Authorizer, find_credentials
from horon_bundle.publish.destinations.oci_deadline import Deadline
from horon_bundle.publish.destinations.oci_file_body import FileBody
from horon_bundle.publish.destinations.oci_http import MAX_JSON_BYTES, Answer, Body, RegistryHttp
from horon_bundle.publish.destinations.oci_layout import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE
from horon_bundle.publish.destinations.oci_origin import Origin, path_of, shown
from horon_bundle.publish.destinations.oci_proxy import read_proxies
from horon_bundle.publish.destinations.oci_realms import read_token_hosts

MAX_MANIFEST_BYTES = MAX_JSON_BYTES
MAX_TAG_PAGES = 100  # pages of a tag list read before `publish.tag-limit`
MAX_TAGS = 100_000  # tags of one repository listed before `publish.tag-limit`
TAG_PAGE = 1000  # tags asked for per page
_UNAVAILABLE = (502, 503, 504)
ACCEPT_MANIFESTS = f"{MANIFEST_MEDIA_TYPE}, {INDEX_MEDIA_TYPE}"
_NEXT = re.compile(r'<([^>]*)>\s*;[^,]*?\brel\s*=\s*"?next"?', re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fetched:
    data: bytes
    media_type: str
    etag: str | None


class ConcurrentWrite(Exception):
    """A conditional write lost to another writer (HTTP 412): read again and retry."""


class RegistryClient:
    def __init__(self, address: OciAddress, environ: Mapping[str, str], *,
                 http: RegistryHttp | None = None,
                 on_retry: Callable[[str], None] | None = None) -> None:
        """`http`: a transport configured explicitly (tests: shorter deadlines, a test CA);
        by default one for `https://REGISTRY`, or plain `http://` for a loopback address,
        through the proxies `environ` names. `environ` also gives the credentials and the
        token services on other hosts they may go to (`oci_realms`)."""
        self.address = address
        scheme = "http" if address.loopback else "https"
        token_hosts = read_token_hosts(environ)
        self.http = http or RegistryHttp(f"{scheme}://{address.registry}",
                                         display=address.display, on_retry=on_retry,
                                         proxies=read_proxies(environ))
        self.base = f"{self.http.origin.scheme}://{address.registry}"
        credentials = find_credentials(address, environ)
        self.credential_problem = credentials.problem
        self.auth = Authorizer(self.http, credentials, token_hosts)

    def close(self) -> None:
        self.http.close()

    # --- transport -------------------------------------------------------------------------
    def request(self, method: str, path: str, *, headers: Mapping[str, str] | None = None,
                data: bytes | Body | None = None, url: str | None = None,
                deadline: Deadline | None = None, limit: int = MAX_JSON_BYTES) -> Answer:
        """One request with authentication; 401 is answered once, then refused."""
        target = url or f"{self.base}{path}"
        deadline = deadline or self.http.deadline()
        sent = dict(headers or {})
        answer = self.http.send(method, target, deadline=deadline, limit=limit, body=data,
                                headers={**sent, **self.auth.headers(target)})
        if answer.status != 401:
            return self._checked(method, answer)
        self.auth.answer(method, answer, deadline)
        answer = self.http.send(method, target, deadline=deadline, limit=limit, body=data,
                                headers={**sent, **self.auth.headers(target)})
        if answer.status == 401:
            raise self.auth.refusal(method, answer)
        return self._checked(method, answer)

    def _checked(self, method: str, answer: Answer) -> Answer:
        status = answer.status
        if status == 403:
            raise Refused.one(codes.PUBLISH_NOT_WRITABLE if method in ("POST", "PUT", "PATCH")
                              else codes.PUBLISH_AUTH,
                              f"{self.address.display}: {method} {path_of(answer.url)}: "
                              "403 denied")
        if status in _UNAVAILABLE:
            raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{self.address.display}: {method} "
                              f"{path_of(answer.url)}: {status}{_tries(answer)}")
        return answer

    def unexpected(self, method: str, path: str, answer: Answer) -> Refused:
        return Refused.one(codes.PUBLISH_DESTINATION_STATE,
                           f"{self.address.display}: {method} {path}: unexpected "
                           f"{answer.status}{_tries(answer)} {error_text(answer)}".rstrip())

    # --- API ---------------------------------------------------------------------------------
    def ping(self) -> list[Finding]:
        try:
            answer = self.http.send("GET", f"{self.base}/v2/", deadline=self.http.deadline())
        except Refused as exc:
            return list(exc.findings)
        if answer.status in (200, 401):
            return []
        return [Finding(codes.PUBLISH_UNREACHABLE, f"{self.address.display}: GET /v2/ answered "
                                                   f"{answer.status}{_tries(answer)}: not an "
                                                   "OCI registry")]

    def check_push(self, repository: str) -> list[Finding]:
        """Open a blob upload session and cancel it: proves push access, stores nothing."""
        path = f"/v2/{repository}/blobs/uploads/"
        try:
            answer = self.request("POST", path)
            if answer.status != 202:
                raise self.unexpected("POST", path, answer)
            self.request("DELETE", "", url=self._location(answer, "POST " + path))
        except Refused as exc:
            return list(exc.findings)
        return []

    def _location(self, answer: Answer, what: str) -> str:
        return self.http.resolve(answer.url, answer.header("Location"), what)

    def blob_size(self, repository: str, digest: Digest) -> int | None:
        """The size of the stored blob (None: absent); a registry naming another digest is
        refused, and so is a size other than the digest's (content addressing is broken)."""
        path = f"/v2/{repository}/blobs/sha256:{digest.sha256}"
        answer = self.request("HEAD", path)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise self.unexpected("HEAD", path, answer)
        named = answer.header("Docker-Content-Digest")
        size = answer.header("Content-Length") or ""
        if named not in (None, f"sha256:{digest.sha256}") or size != str(digest.size):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} answers "
                                                       f"digest {shown(str(named), 80)}, "
                                                       f"{shown(size, 20) or '?'} bytes; "
                                                       f"expected {digest.size} bytes")
        return digest.size

    def push_blob(self, repository: str, data: bytes) -> Digest:
        """Upload a small blob held in memory unless present; confirm it by digest."""
        digest = hash_bytes(data)
        if self.blob_size(repository, digest) is None:
            self._upload(repository, digest, data)
            self.confirm_blob(repository, digest)
        return digest

    def push_file(self, repository: str, path: Path, expected: Digest, where: str) -> None:
        """Upload a file as a blob unless present, streamed from disk (memory stays flat);
        the registry checks the digest of what it received, a HEAD confirms what it holds."""
        if self.blob_size(repository, expected) is not None:
            return
        self._upload(repository, expected, FileBody(path, expected.size, where))
        self.confirm_blob(repository, expected)

    def _upload(self, repository: str, digest: Digest, body: bytes | FileBody) -> None:
        self.finish_upload(repository, self.open_upload(repository), digest, body)

    def open_upload(self, repository: str) -> str:
        """A blob upload session (`POST`): its location."""
        path = f"/v2/{repository}/blobs/uploads/"
        answer = self.request("POST", path)
        if answer.status != 202:
            raise self.unexpected("POST", path, answer)
        return self._location(answer, "POST " + path)

    def send_chunk(self, repository: str, location: str, body: FileBody) -> str:
        """The whole body as the session's one chunk (`PATCH` with its `Content-Range`, as
        the distribution specification's chunked upload has it), nothing stored yet: the
        location to finish the session at."""
        answer = self.request("PATCH", "", url=location, data=body,
                              headers={"Content-Type": "application/octet-stream",
                                       "Content-Range": f"0-{len(body) - 1}"},
                              deadline=self.http.deadline(blob_size=len(body)))
        if answer.status != 202:
            raise self.unexpected("PATCH", f"/v2/{repository}/blobs/uploads/…", answer)
        return self._location(answer, f"PATCH /v2/{repository}/blobs/uploads/…")

    def finish_upload(self, repository: str, location: str, digest: Digest,
                      body: bytes | FileBody = b"") -> None:
        """Close the session with its digest (`PUT ?digest=`), carrying `body` (all of the
        blob, or nothing after a chunk): the registry stores the blob only if the bytes it
        received have that digest."""
        joiner = "&" if "?" in location else "?"
        answer = self.request(
            "PUT", "", url=f"{location}{joiner}digest=sha256:{digest.sha256}", data=body,
            headers={"Content-Type": "application/octet-stream"},
            deadline=self.http.deadline(blob_size=len(body)))
        if answer.status == 400 and error_code(answer) == "DIGEST_INVALID":
            raise Refused.one(codes.PUBLISH_INTEGRITY,
                              f"{self.address.display}: the registry received other bytes "
                              f"than sha256 {digest.sha256}")
        if answer.status != 201:
            raise self.unexpected("PUT", f"/v2/{repository}/blobs/uploads/…", answer)
        named = answer.header("Docker-Content-Digest")
        if named not in (None, f"sha256:{digest.sha256}"):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: stored the "
                                                       f"upload as {shown(str(named), 80)}, sent "
                                                       f"sha256:{digest.sha256}")

    def cancel_upload(self, location: str) -> None:
        """Cancel a session (`DELETE`): what it received is dropped, nothing was stored."""
        self.request("DELETE", "", url=location)

    def confirm_blob(self, repository: str, digest: Digest) -> None:
        """The registry holds the blob under its digest with its size (a HEAD: nothing read)."""
        if self.blob_size(repository, digest) is None:
            raise Refused.one(codes.PUBLISH_INTEGRITY,
                              f"{self.address.display}: /v2/{repository}/blobs/sha256:"
                              f"{digest.sha256} is missing right after its upload")

    def get_manifest(self, repository: str, reference: str) -> Fetched | None:
        """A manifest or index by tag or digest, with its media type and ETag (None: 404)."""
        path = f"/v2/{repository}/manifests/{reference}"
        answer = self.request("GET", path, headers={"Accept": ACCEPT_MANIFESTS},
                              limit=MAX_MANIFEST_BYTES)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise self.unexpected("GET", path, answer)
        return Fetched(data=answer.body, media_type=answer.header("Content-Type") or "",
                       etag=answer.header("ETag"))

    def put_manifest(self, repository: str, reference: str, data: bytes, *,
                     media_type: str = MANIFEST_MEDIA_TYPE,
                     if_match: str | None = None) -> Answer:
        """Write a manifest byte for byte; returns the answer (for its `OCI-Subject`).

        `if_match`: the ETag read before a read-modify-write; a registry that honours
        conditional requests answers 412 when another writer came first (`Conflict`)."""
        path = f"/v2/{repository}/manifests/{reference}"
        headers = {"Content-Type": media_type}
        if if_match:
            headers["If-Match"] = if_match
        answer = self.request("PUT", path, data=data, headers=headers)
        if answer.status == 412 and if_match:
            raise ConcurrentWrite(path)
        if answer.status != 201:
            raise self.unexpected("PUT", path, answer)
        digest = answer.header("Docker-Content-Digest")
        expected = "sha256:" + hash_bytes(data).sha256
        if digest not in (None, expected):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} stored "
                                                       f"as {shown(str(digest), 80)}, sent "
                                                       f"{expected}")
        return answer

    def get_referrers(self, repository: str, subject: str) -> bytes | None:
        """The referrers API's answer for `subject` (an image index), or None when the
        registry has no referrers API (404, as distribution 2.8 answers)."""
        path = f"/v2/{repository}/referrers/{subject}"
        answer = self.request("GET", path, headers={"Accept": INDEX_MEDIA_TYPE},
                              limit=MAX_MANIFEST_BYTES)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise self.unexpected("GET", path, answer)
        return answer.body

    def tags(self, repository: str) -> list[str]:
        """Every tag of the repository, page by page: at most `MAX_TAG_PAGES` pages and
        `MAX_TAGS` tags (`publish.tag-limit`), each page on the registry's own origin."""
        url = f"{self.base}/v2/{repository}/tags/list?n={TAG_PAGE}"
        found: list[str] = []
        for _page in range(MAX_TAG_PAGES):
            answer = self.request("GET", "", url=url)
            where = path_of(answer.url)
            if answer.status == 404:
                return found
            if answer.status != 200:
                raise self.unexpected("GET", where, answer)
            try:
                document = read_json(answer.body, source=where, max_bytes=len(answer.body) + 1)
            except Refused:
                raise self.unexpected("GET", where, answer) from None
            tags = document.get("tags") if isinstance(document, dict) else None
            if isinstance(tags, list):
                found.extend(t for t in tags if isinstance(t, str))
            if len(found) > MAX_TAGS:
                raise self._tag_limit(repository, f"more than {MAX_TAGS} tags")
            link = next_link(answer.header("Link"))
            if link is None:
                return found
            url = self._location_here(url, link, f"GET {where}: next page")
        raise self._tag_limit(repository, f"more than {MAX_TAG_PAGES} pages")

    def _location_here(self, request_url: str, location: str, what: str) -> str:
        url = self.http.resolve(request_url, location, what)
        if self.http.origin != Origin.of(url):
            raise Refused.one(codes.PUBLISH_UNSAFE_LOCATION, f"{self.address.display}: {what}: "
                              f"{Origin.of(url).text} is not the registry")
        return url

    def _tag_limit(self, repository: str, what: str) -> Refused:
        return Refused.one(codes.PUBLISH_TAG_LIMIT, f"{self.address.display}: /v2/{repository}"
                                                    f"/tags/list: {what}; nothing was changed")


def next_link(header: str | None) -> str | None:
    """The target of `Link: <…>; rel="next"` (RFC 8288), or None."""
    match = _NEXT.search(header or "")
    return match.group(1) if match else None


def error_code(answer: Answer) -> str:
    """The distribution error code of an error answer (`DIGEST_INVALID`), or ""."""
    return _errors(answer)[0]


def error_text(answer: Answer) -> str:
    """The registry's own words for an error (code: message), escaped and short."""
    code, message = _errors(answer)
    return shown(f"{code}: {message}" if code and message else code or message)


def _errors(answer: Answer) -> tuple[str, str]:
    try:
        document = read_json(answer.body, source="error", max_bytes=len(answer.body) + 1)
        first = document["errors"][0]  # type: ignore[index]
        return str(first.get("code", ""))[:60], str(first.get("message", ""))
    except (Refused, KeyError, IndexError, TypeError, AttributeError):
        return "", ""


def _tries(answer: Answer) -> str:
    return f" ({answer.attempts} attempts)" if answer.attempts > 1 else ""
