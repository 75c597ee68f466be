"""A small OCI distribution client on top of requests and oras-py's authentication.

requests (imported lazily) brings the HTTP session, oras-py's `oras.auth` the bearer-token
flow and credentials from the Docker config (not `oras.provider`, which also imports
jsonschema: 30 MiB and a second of start-up); this module adds what publishing needs and
oras's `push` lacks: manifests written byte for byte (with `artifactType`), blobs streamed
from their file and never held whole (a 1 GiB archive never sits in memory), every answer
checked, no silent retries (oras retries for minutes against a dead registry), timeouts, and
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

import base64
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.publish.destinations.interface import OciAddress
from horon_bundle.publish.destinations.oci_layout import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE

USERNAME_VARIABLE = "HORON_REGISTRY_USERNAME"
PASSWORD_VARIABLE = "HORON_REGISTRY_PASSWORD"  # noqa: S105 - the variable's name, not a secret
TIMEOUT = (10.0, 120.0)  # connect, read (seconds)
MAX_MANIFEST_BYTES = 4 << 20
UPLOAD_CHUNK = 1 << 20  # bytes per send: few system calls, flat memory (docs/benchmarks.md)
_UNAVAILABLE = (502, 503, 504)
ACCEPT_MANIFESTS = f"{MANIFEST_MEDIA_TYPE}, {INDEX_MEDIA_TYPE}"


class FileBody:
    """A request body read from a file in `UPLOAD_CHUNK` pieces, never whole.

    It has a length, so the request carries `Content-Length` (no chunked transfer encoding);
    it can be iterated again, so a request answered by 401 is sent again from the start.
    Exactly the checked size is sent: the registry recomputes the digest of those bytes and
    refuses a difference (`DIGEST_INVALID`), so a file changed since it was checked is
    stored under no name; a file that became shorter is refused mid-request (the registry
    sees a truncated body and stores nothing) instead of leaving it waiting for bytes."""

    def __init__(self, path: Path, expected: Digest, where: str) -> None:
        self.path = path
        self.expected = expected
        self.where = where

    def __len__(self) -> int:
        return self.expected.size

    def __iter__(self) -> Iterator[bytes]:
        remaining = self.expected.size
        try:
            stream = self.path.open("rb", buffering=0)
        except OSError as exc:
            raise Refused.one(codes.INPUT_UNREADABLE, f"{self.path}: {exc.strerror}") from None
        with stream:
            while remaining:
                try:
                    chunk = stream.read(min(UPLOAD_CHUNK, remaining))
                except OSError as exc:
                    raise Refused.one(codes.INPUT_UNREADABLE,
                                      f"{self.path}: {exc.strerror}") from None
                if not chunk:
                    raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.where}: the file became "
                                      "shorter since it was checked; nothing was published")
                remaining -= len(chunk)
                yield chunk


@dataclass(frozen=True, slots=True, kw_only=True)
class Fetched:
    data: bytes
    media_type: str
    etag: str | None


class ConcurrentWrite(Exception):
    """A conditional write lost to another writer (HTTP 412): read again and retry."""


class RegistryClient:
    def __init__(self, address: OciAddress, environ: Mapping[str, str]) -> None:
        # oras.auth alone: oras.provider would also import jsonschema (+30 MiB, +1.3 s here)
        import http.cookiejar  # noqa: PLC0415 - with the session

        import oras.auth  # type: ignore[import-untyped]  # noqa: PLC0415 - heavy: requests
        import oras.container  # type: ignore[import-untyped]  # noqa: PLC0415 - heavy
        import requests  # noqa: PLC0415 - comes with oras

        self.address = address
        scheme = "http" if address.loopback else "https"
        self.base = f"{scheme}://{address.registry}"
        self._session: Any = requests.Session()
        # no cookies: some registries (Harbor) take one as a sign of a browser
        self._session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        self._auth: Any = oras.auth.get_auth_backend("token", self._session, address.loopback)
        self._basic: str | None = None
        self.credential_problem: str | None = None
        username = environ.get(USERNAME_VARIABLE, "")
        password = environ.get(PASSWORD_VARIABLE, "")
        if username and password:
            self._auth.set_basic_auth(username, password)
            self._basic = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
        elif username or password:
            self.credential_problem = (f"only one of {USERNAME_VARIABLE} and {PASSWORD_VARIABLE}"
                                       " is set")
        else:
            configs = []
            if environ.get("DOCKER_CONFIG"):
                configs.append(f"{environ['DOCKER_CONFIG']}/config.json")
            container = oras.container.Container(f"{address.namespace}/probe",
                                                 registry=address.registry)
            try:
                self._auth.load_configs(container, configs=configs or None)
            except (OSError, ValueError):
                self.credential_problem = "the Docker config cannot be read"
            self._basic = getattr(self._auth, "_basic_auth", None)

    # --- transport -------------------------------------------------------------------------
    def _send(self, method: str, url: str, headers: dict[str, str],
              data: bytes | FileBody | None, stream: bool) -> Any:
        import requests  # noqa: PLC0415 - comes with oras

        try:
            return self._session.request(method, url, headers=headers, data=data, stream=stream,
                                         timeout=TIMEOUT, allow_redirects=True)
        except requests.exceptions.SSLError:
            reason = "TLS handshake or certificate verification failed"
        except requests.exceptions.Timeout:
            reason = "no answer in time"
        except requests.exceptions.ConnectionError:
            reason = "connection refused or lost"
        except requests.exceptions.RequestException as exc:
            reason = type(exc).__name__
        raise Refused.one(codes.PUBLISH_UNREACHABLE,
                          f"{self.address.display}: {method} {_path(url)}: {reason}")

    def request(self, method: str, path: str, *, headers: Mapping[str, str] | None = None,
                data: bytes | FileBody | None = None, stream: bool = False,
                url: str | None = None) -> Any:
        """One request with authentication; 401 is answered once, then refused."""
        target = url or f"{self.base}{path}"
        sent = dict(headers or {})
        sent.update(self._auth.get_auth_header())
        response = self._send(method, target, sent, data, stream)
        if response.status_code != 401:
            return self._checked(method, target, response)
        if self.credential_problem:
            raise Refused.one(codes.PUBLISH_AUTH,
                              f"{self.address.display}: {self.credential_problem}")
        challenge = response.headers.get("Www-Authenticate", "")
        if challenge.lower().startswith("basic"):
            if not self._basic:
                raise Refused.one(codes.PUBLISH_AUTH, f"{self.address.display}: the registry "
                                                      "asks for credentials and none were found")
            sent["Authorization"] = "Basic " + self._basic
        else:
            sent, changed = self._auth.authenticate_request(response, sent, refresh=True)
            if not changed:
                raise Refused.one(codes.PUBLISH_AUTH, f"{self.address.display}: no token for "
                                                      f"{method} {_path(target)}")
        response = self._send(method, target, sent, data, stream)
        if response.status_code == 401:
            raise Refused.one(codes.PUBLISH_AUTH, f"{self.address.display}: credentials refused "
                                                  f"for {method} {_path(target)}")
        return self._checked(method, target, response)

    def _checked(self, method: str, url: str, response: Any) -> Any:
        status = response.status_code
        if status == 403:
            raise Refused.one(codes.PUBLISH_NOT_WRITABLE if method in ("POST", "PUT", "PATCH")
                              else codes.PUBLISH_AUTH,
                              f"{self.address.display}: {method} {_path(url)}: 403 denied")
        if status in _UNAVAILABLE:
            raise Refused.one(codes.PUBLISH_UNREACHABLE,
                              f"{self.address.display}: {method} {_path(url)}: {status}")
        return response

    def unexpected(self, method: str, path: str, response: Any) -> Refused:
        return Refused.one(codes.PUBLISH_DESTINATION_STATE,
                           f"{self.address.display}: {method} {path}: unexpected "
                           f"{response.status_code} {_error_code(response)}")

    # --- API ---------------------------------------------------------------------------------
    def ping(self) -> list[Finding]:
        try:
            response = self._send("GET", f"{self.base}/v2/", {}, None, False)
        except Refused as exc:
            return list(exc.findings)
        if response.status_code in (200, 401):
            return []
        return [Finding(codes.PUBLISH_UNREACHABLE, f"{self.address.display}: GET /v2/ answered "
                                                   f"{response.status_code}: not an OCI registry")]

    def check_push(self, repository: str) -> list[Finding]:
        """Open a blob upload session and cancel it: proves push access, stores nothing."""
        path = f"/v2/{repository}/blobs/uploads/"
        try:
            response = self.request("POST", path, headers={"Content-Length": "0"})
            if response.status_code != 202 or not response.headers.get("Location"):
                raise self.unexpected("POST", path, response)
            self.request("DELETE", "", url=self._location(response))
        except Refused as exc:
            return list(exc.findings)
        return []

    def _location(self, response: Any) -> str:
        location: str = response.headers["Location"]
        return location if location.startswith(("http://", "https://")) else self.base + location

    def blob_size(self, repository: str, digest: Digest) -> int | None:
        """The size of the stored blob (None: absent); a registry naming another digest is
        refused, and so is a size other than the digest's (content addressing is broken)."""
        path = f"/v2/{repository}/blobs/sha256:{digest.sha256}"
        response = self.request("HEAD", path)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self.unexpected("HEAD", path, response)
        named = response.headers.get("Docker-Content-Digest")
        size = response.headers.get("Content-Length", "")
        if named not in (None, f"sha256:{digest.sha256}") or size != str(digest.size):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} answers "
                                                       f"digest {named}, {size or '?'} bytes; "
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
        self._upload(repository, expected, FileBody(path, expected, where))
        self.confirm_blob(repository, expected)

    def _upload(self, repository: str, digest: Digest, body: bytes | FileBody) -> None:
        path = f"/v2/{repository}/blobs/uploads/"
        response = self.request("POST", path, headers={"Content-Length": "0"})
        if response.status_code != 202 or not response.headers.get("Location"):
            raise self.unexpected("POST", path, response)
        location = self._location(response)
        joiner = "&" if "?" in location else "?"
        response = self.request(
            "PUT", "", url=f"{location}{joiner}digest=sha256:{digest.sha256}", data=body,
            headers={"Content-Type": "application/octet-stream",
                     "Content-Length": str(digest.size)})
        if response.status_code == 400 and _error_code(response) == "DIGEST_INVALID":
            raise Refused.one(codes.PUBLISH_INTEGRITY,
                              f"{self.address.display}: the registry received other bytes "
                              f"than sha256 {digest.sha256}")
        if response.status_code != 201:
            raise self.unexpected("PUT", f"/v2/{repository}/blobs/uploads/…", response)
        named = response.headers.get("Docker-Content-Digest")
        if named not in (None, f"sha256:{digest.sha256}"):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: stored the "
                                                       f"upload as {named}, sent sha256:"
                                                       f"{digest.sha256}")

    def confirm_blob(self, repository: str, digest: Digest) -> None:
        """The registry holds the blob under its digest with its size (a HEAD: nothing read)."""
        if self.blob_size(repository, digest) is None:
            raise Refused.one(codes.PUBLISH_INTEGRITY,
                              f"{self.address.display}: /v2/{repository}/blobs/sha256:"
                              f"{digest.sha256} is missing right after its upload")

    def _body(self, path: str, response: Any, limit: int) -> bytes:
        chunks, size = [], 0
        for chunk in response.iter_content(chunk_size=1 << 16):
            size += len(chunk)
            if size > limit:
                raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                                  f"{self.address.display}: {path} is larger than {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def get_manifest(self, repository: str, reference: str) -> Fetched | None:
        """A manifest or index by tag or digest, with its media type and ETag (None: 404)."""
        path = f"/v2/{repository}/manifests/{reference}"
        response = self.request("GET", path, headers={"Accept": ACCEPT_MANIFESTS}, stream=True)
        try:
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                raise self.unexpected("GET", path, response)
            data = self._body(path, response, MAX_MANIFEST_BYTES)
            return Fetched(data=data, media_type=response.headers.get("Content-Type", ""),
                           etag=response.headers.get("ETag"))
        finally:
            response.close()

    def put_manifest(self, repository: str, reference: str, data: bytes, *,
                     media_type: str = MANIFEST_MEDIA_TYPE,
                     if_match: str | None = None) -> Any:
        """Write a manifest byte for byte; returns the response (for its `OCI-Subject`).

        `if_match`: the ETag read before a read-modify-write; a registry that honours
        conditional requests answers 412 when another writer came first (`Conflict`)."""
        path = f"/v2/{repository}/manifests/{reference}"
        headers = {"Content-Type": media_type}
        if if_match:
            headers["If-Match"] = if_match
        response = self.request("PUT", path, data=data, headers=headers)
        if response.status_code == 412 and if_match:
            raise ConcurrentWrite(path)
        if response.status_code != 201:
            raise self.unexpected("PUT", path, response)
        digest = response.headers.get("Docker-Content-Digest")
        expected = "sha256:" + hash_bytes(data).sha256
        if digest not in (None, expected):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} stored "
                                                       f"as {digest}, sent {expected}")
        return response

    def get_referrers(self, repository: str, subject: str) -> bytes | None:
        """The referrers API's answer for `subject` (an image index), or None when the
        registry has no referrers API (404, as distribution 2.8 answers)."""
        path = f"/v2/{repository}/referrers/{subject}"
        response = self.request("GET", path, headers={"Accept": INDEX_MEDIA_TYPE}, stream=True)
        try:
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                raise self.unexpected("GET", path, response)
            return self._body(path, response, MAX_MANIFEST_BYTES)
        finally:
            response.close()

    def tags(self, repository: str) -> list[str]:
        path: str | None = f"/v2/{repository}/tags/list?n=1000"
        found: list[str] = []
        while path:
            response = self.request("GET", path)
            if response.status_code == 404:
                return found
            if response.status_code != 200:
                raise self.unexpected("GET", path, response)
            try:
                document = response.json()
            except ValueError:
                raise self.unexpected("GET", path, response) from None
            tags = document.get("tags") if isinstance(document, dict) else None
            found.extend(t for t in tags or [] if isinstance(t, str))
            link = response.links.get("next", {}).get("url")
            path = link if isinstance(link, str) and link.startswith("/v2/") else None
        return found


def _path(url: str) -> str:
    """The path of a URL without its query (upload session state stays out of messages)."""
    rest = url.split("://", 1)[-1]
    path = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    return path.split("?", 1)[0]


def _error_code(response: Any) -> str:
    try:
        errors = response.json().get("errors") or []
        return str(errors[0].get("code", ""))[:60]
    except (ValueError, AttributeError, IndexError, TypeError):
        return ""
