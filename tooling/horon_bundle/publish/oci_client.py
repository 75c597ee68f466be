"""A small OCI distribution client on top of oras-py's session and authentication.

oras-py (imported lazily) brings the HTTP session, the bearer-token flow and credentials
from the Docker config; this module adds what publishing needs and oras's `push` lacks:
manifests written byte for byte (with `artifactType`), blobs from memory, every answer
checked, no silent retries (oras retries for minutes against a dead registry), timeouts,
and every transport failure turned into a refusal. Credentials are never logged: messages
name the registry, the path and the HTTP status, nothing else.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.publish.destination import OciAddress
from horon_bundle.publish.oci_layout import MANIFEST_MEDIA_TYPE

USERNAME_VARIABLE = "HORON_REGISTRY_USERNAME"
PASSWORD_VARIABLE = "HORON_REGISTRY_PASSWORD"  # noqa: S105 - the variable's name, not a secret
TIMEOUT = (10.0, 120.0)  # connect, read (seconds)
MAX_MANIFEST_BYTES = 4 << 20
_UNAVAILABLE = (502, 503, 504)


class RegistryClient:
    def __init__(self, address: OciAddress, environ: Mapping[str, str]) -> None:
        import oras.container  # type: ignore[import-untyped]  # noqa: PLC0415 - heavy
        import oras.provider  # type: ignore[import-untyped]  # noqa: PLC0415 - heavy

        self.address = address
        scheme = "http" if address.loopback else "https"
        self.base = f"{scheme}://{address.registry}"
        self._oras = oras.provider.Registry(hostname=address.registry, insecure=address.loopback,
                                            auth_backend="token")
        self._session: Any = self._oras.session
        self._auth: Any = self._oras.auth
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
    def _send(self, method: str, url: str, headers: dict[str, str], data: bytes | None,
              stream: bool) -> Any:
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
                data: bytes | None = None, stream: bool = False,
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

    def blob_size(self, repository: str, sha256: str) -> int | None:
        path = f"/v2/{repository}/blobs/sha256:{sha256}"
        response = self.request("HEAD", path)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self.unexpected("HEAD", path, response)
        digest = response.headers.get("Docker-Content-Digest")
        if digest not in (None, f"sha256:{sha256}"):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} answers "
                                                       f"digest {digest}")
        return int(response.headers.get("Content-Length", "-1"))

    def push_blob(self, repository: str, data: bytes) -> Digest:
        """Upload a blob unless present, then read it back and compare digests."""
        digest = hash_bytes(data)
        if self.blob_size(repository, digest.sha256) is None:
            path = f"/v2/{repository}/blobs/uploads/"
            response = self.request("POST", path, headers={"Content-Length": "0"})
            if response.status_code != 202 or not response.headers.get("Location"):
                raise self.unexpected("POST", path, response)
            location = self._location(response)
            joiner = "&" if "?" in location else "?"
            response = self.request(
                "PUT", "", url=f"{location}{joiner}digest=sha256:{digest.sha256}", data=data,
                headers={"Content-Type": "application/octet-stream",
                         "Content-Length": str(len(data))})
            if response.status_code == 400 and _error_code(response) == "DIGEST_INVALID":
                raise Refused.one(codes.PUBLISH_INTEGRITY,
                                  f"{self.address.display}: the registry received other bytes "
                                  f"than sha256 {digest.sha256}")
            if response.status_code != 201:
                raise self.unexpected("PUT", f"/v2/{repository}/blobs/uploads/…", response)
        self.verify_blob(repository, digest)
        return digest

    def verify_blob(self, repository: str, digest: Digest) -> None:
        path = f"/v2/{repository}/blobs/sha256:{digest.sha256}"
        data = self.fetch(path, limit=digest.size)
        actual = hash_bytes(data)
        if actual != digest:
            raise Refused.one(codes.PUBLISH_INTEGRITY,
                              f"{self.address.display}: {path} reads back as sha256 "
                              f"{actual.sha256} ({actual.size} bytes)")

    def fetch(self, path: str, *, limit: int, accept: str | None = None) -> bytes:
        headers = {"Accept": accept} if accept else {}
        response = self.request("GET", path, headers=headers, stream=True)
        try:
            if response.status_code != 200:
                raise self.unexpected("GET", path, response)
            chunks, size = [], 0
            for chunk in response.iter_content(chunk_size=1 << 16):
                size += len(chunk)
                if size > limit:
                    raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} "
                                                               f"is larger than {limit} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            response.close()

    def get_manifest(self, repository: str, reference: str) -> bytes | None:
        path = f"/v2/{repository}/manifests/{reference}"
        response = self.request("HEAD", path, headers={"Accept": MANIFEST_MEDIA_TYPE})
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self.unexpected("HEAD", path, response)
        return self.fetch(path, limit=MAX_MANIFEST_BYTES, accept=MANIFEST_MEDIA_TYPE)

    def put_manifest(self, repository: str, reference: str, data: bytes) -> None:
        path = f"/v2/{repository}/manifests/{reference}"
        response = self.request("PUT", path, data=data,
                                headers={"Content-Type": MANIFEST_MEDIA_TYPE})
        if response.status_code != 201:
            raise self.unexpected("PUT", path, response)
        digest = response.headers.get("Docker-Content-Digest")
        expected = "sha256:" + hash_bytes(data).sha256
        if digest not in (None, expected):
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.address.display}: {path} stored "
                                                       f"as {digest}, sent {expected}")

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
