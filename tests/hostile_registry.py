"""A hostile OCI registry served by the test itself, on a loopback address only.

An honest in-memory registry answers the distribution API as far as `publish` and `yank` go
(the ping, blob upload sessions, HEAD of a blob, manifests by tag and digest, the referrers
API, tag lists); a `fault` hook sees every request first and may answer in its place. That is
how each attack is one line in a test: a 600 MiB answer (`huge`, generated piece by piece, never
held), a body that dribbles a byte a second (`dribble`), an upload `Location` on another
loopback address (a second server on 127.0.0.2 sharing the store), an endless tag list, a wrong
digest, a run of 500s. Every request is recorded (method, path, headers) for the test to read.

Only 127.0.0.0/8 is ever bound (Linux routes the whole block to the loopback interface), and a
`tls` context makes the server speak HTTPS with a test certificate (`tls_pair`).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import ipaddress
import itertools
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIB = 1 << 20
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"

_BLOBS = re.compile(r"/v2/(?P<repo>.+)/blobs/(?P<digest>sha256:[0-9a-f]{64})")
_UPLOADS = re.compile(r"/v2/(?P<repo>.+)/blobs/uploads/")
_SESSION = re.compile(r"(?:/v2/.+/blobs/uploads|/u)/(?P<session>[0-9]+)")
_MANIFESTS = re.compile(r"/v2/(?P<repo>.+)/manifests/(?P<ref>[^/]+)")
_REFERRERS = re.compile(r"/v2/(?P<repo>.+)/referrers/(?P<digest>sha256:[0-9a-f]{64})")
_TAGS = re.compile(r"/v2/(?P<repo>.+)/tags/list")


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str  # with its query
    headers: dict[str, str]  # names lower-cased
    server: str  # the address that received it ("127.0.0.1:PORT")
    peer: int  # the client's port: one per connection

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")


@dataclass
class Reply:
    """An answer: `body` bytes (sent with their Content-Length) or an iterable of pieces
    (sent as they come, the connection closed after them unless `headers` give a length);
    `raw` replaces the whole answer, status line included, with the pieces it yields;
    `hang_up` closes the connection after the answer without saying so."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""
    raw: Iterable[bytes] | None = None
    hang_up: bool = False


Fault = Callable[[Seen], "Reply | None"]


def huge(size: int, piece: bytes = b"x") -> Iterator[bytes]:
    """`size` bytes, a MiB at a time, one MiB object reused: nothing accumulates."""
    block = piece * (MIB // len(piece))
    left = size
    while left > 0:
        yield block[:left]
        left -= len(block)


def dribble(data: bytes, every: float = 1.0) -> Iterator[bytes]:
    """`data` one byte at a time, `every` seconds apart (the first byte at once)."""
    for index in range(len(data)):
        if index:
            time.sleep(every)
        yield data[index:index + 1]


def json_reply(document: Any, status: int = 200, **headers: str) -> Reply:
    return Reply(status, {"Content-Type": "application/json", **headers},
                 json.dumps(document).encode())


def error_reply(status: int, code: str, message: str = "") -> Reply:
    return json_reply({"errors": [{"code": code, "message": message}]}, status)


class Store:
    """What the registry holds, shared by every server that answers for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.blobs: dict[str, bytes] = {}
        self.manifests: dict[tuple[str, str], tuple[bytes, str]] = {}
        self.referrers: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.sessions: dict[str, str] = {}  # upload session -> repository
        self._numbers = itertools.count(1)

    def new_session(self, repository: str) -> str:
        with self.lock:
            session = str(next(self._numbers))
            self.sessions[session] = repository
            return session

    def tags(self, repository: str) -> list[str]:
        with self.lock:
            return sorted(ref for repo, ref in self.manifests
                          if repo == repository and not ref.startswith("sha256:"))


class HostileRegistry:
    """A registry on `host` (127.0.0.0/8 only) and port 0; a context manager."""

    def __init__(self, host: str = "127.0.0.1", *, store: Store | None = None,
                 fault: Fault | None = None, credentials: tuple[str, str] | None = None,
                 upload_origin: str | None = None, tls: ssl.SSLContext | None = None) -> None:
        assert ipaddress.ip_address(host).is_loopback, "a test registry binds loopback only"
        self.store = store or Store()
        self.fault = fault
        self.credentials = credentials  # set: every request needs exactly these (Basic)
        self.upload_origin = upload_origin  # set: upload Locations are absolute, on that origin
        self.seen: list[Seen] = []
        self.tls = tls
        self._server = _Server((host, 0), _Handler, self)
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def destination(self, namespace: str = "horon") -> str:
        return f"oci://{self.address}/{namespace}"

    def __enter__(self) -> HostileRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def requests(self, method: str | None = None) -> list[Seen]:
        return [s for s in list(self.seen) if method is None or s.method == method]

    # --- the honest registry -----------------------------------------------------------------
    def answer(self, seen: Seen, body: bytes) -> Reply:
        if self.credentials is not None and not self._authorized(seen):
            return Reply(401, {"WWW-Authenticate": 'Basic realm="hostile"'}, b"")
        path = seen.path.split("?", 1)[0]
        if path == "/v2/":
            return json_reply({})
        if match := _SESSION.fullmatch(path):
            return self._session(seen, match["session"], body)
        if match := _UPLOADS.fullmatch(path):
            return self._open_upload(match["repo"]) if seen.method == "POST" else Reply(405)
        if match := _BLOBS.fullmatch(path):
            return self._blob(seen, match["digest"])
        if match := _REFERRERS.fullmatch(path):
            with self.store.lock:
                listed = list(self.store.referrers.get((match["repo"], match["digest"]), []))
            return Reply(200, {"Content-Type": INDEX}, json.dumps(
                {"schemaVersion": 2, "mediaType": INDEX, "manifests": listed}).encode())
        if match := _MANIFESTS.fullmatch(path):
            return self._manifest(seen, match["repo"], match["ref"], body)
        if match := _TAGS.fullmatch(path):
            return json_reply({"name": match["repo"], "tags": self.store.tags(match["repo"])})
        return error_reply(404, "NAME_UNKNOWN")

    def _authorized(self, seen: Seen) -> bool:
        assert self.credentials is not None
        user, password = self.credentials
        expected = base64.b64encode(f"{user}:{password}".encode()).decode()
        return seen.authorization == f"Basic {expected}"

    def _open_upload(self, repository: str) -> Reply:
        session = self.store.new_session(repository)
        location = (f"{self.upload_origin}/u/{session}" if self.upload_origin
                    else f"/v2/{repository}/blobs/uploads/{session}")
        return Reply(202, {"Location": location, "Content-Length": "0"})

    def _session(self, seen: Seen, session: str, body: bytes) -> Reply:
        with self.store.lock:
            repository = self.store.sessions.pop(session, None)
        if repository is None:
            return error_reply(404, "BLOB_UPLOAD_UNKNOWN")
        if seen.method == "DELETE":
            return Reply(204)
        if seen.method != "PUT":
            return Reply(405)
        wanted = seen.path.partition("digest=")[2].split("&", 1)[0]
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        if wanted != digest:
            return error_reply(400, "DIGEST_INVALID")
        with self.store.lock:
            self.store.blobs[digest] = body
        return Reply(201, {"Docker-Content-Digest": digest,
                           "Location": f"/v2/{repository}/blobs/{digest}"})

    def _blob(self, seen: Seen, digest: str) -> Reply:
        with self.store.lock:
            data = self.store.blobs.get(digest)
        if data is None:
            return error_reply(404, "BLOB_UNKNOWN") if seen.method == "GET" else Reply(404)
        return Reply(200, {"Docker-Content-Digest": digest,
                           "Content-Type": "application/octet-stream"}, data)

    def _manifest(self, seen: Seen, repository: str, reference: str, body: bytes) -> Reply:
        if seen.method == "PUT":
            return self._put_manifest(seen, repository, reference, body)
        with self.store.lock:
            held = self.store.manifests.get((repository, reference))
        if held is None:
            return error_reply(404, "MANIFEST_UNKNOWN") if seen.method == "GET" else Reply(404)
        data, media_type = held
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        return Reply(200, {"Content-Type": media_type, "Docker-Content-Digest": digest,
                           "ETag": f'"{digest}"'}, data)

    def _put_manifest(self, seen: Seen, repository: str, reference: str,
                      body: bytes) -> Reply:
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        media_type = seen.headers.get("content-type", MANIFEST)
        headers = {"Docker-Content-Digest": digest, "Content-Length": "0"}
        document = json.loads(body)
        with self.store.lock:
            self.store.manifests[(repository, reference)] = (body, media_type)
            self.store.manifests[(repository, digest)] = (body, media_type)
            subject = document.get("subject")
            if isinstance(subject, dict):
                self.store.referrers.setdefault((repository, subject["digest"]), []).append({
                    "mediaType": media_type, "digest": digest, "size": len(body),
                    "artifactType": document.get("artifactType", "")})
                headers["OCI-Subject"] = subject["digest"]
        return Reply(201, headers)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[_Handler],
                 registry: HostileRegistry) -> None:
        self.registry = registry
        super().__init__(address, handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, client = super().get_request()
        if self.registry.tls is not None:
            connection.settimeout(10)
            try:
                connection = self.registry.tls.wrap_socket(connection, server_side=True)
            except (OSError, ssl.SSLError):
                connection.close()
                raise
        return connection, client

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-answer is what these tests are about: stay quiet."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small answers on kept-alive connections, at once
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _serve(self) -> None:
        registry = self.server.registry
        seen = Seen(self.command, self.path,
                    {name.lower(): value for name, value in self.headers.items()},
                    f"{registry.host}:{registry.port}", self.client_address[1])
        registry.seen.append(seen)
        length = int(self.headers.get("Content-Length") or 0)
        fault = registry.fault(seen) if registry.fault else None
        if fault is None:
            body = self.rfile.read(length) if length else b""
            reply = registry.answer(seen, body)
        else:
            if length and fault.status < 300:
                self.rfile.read(length)
            elif length:
                self.close_connection = True  # an early answer: the body stays unread
            reply = fault
        try:
            self._write(reply)
        except (OSError, ValueError):
            self.close_connection = True

    def _write(self, reply: Reply) -> None:
        if reply.raw is not None:
            self.close_connection = True
            for piece in reply.raw:
                self.wfile.write(piece)
                self.wfile.flush()
            return
        self.send_response(reply.status)
        headers = dict(reply.headers)
        pieces: Iterable[bytes]
        if isinstance(reply.body, bytes):
            headers.setdefault("Content-Length", str(len(reply.body)))
            pieces = [reply.body] if self.command != "HEAD" else []
        else:
            pieces = reply.body
            if "Content-Length" not in headers:
                headers["Connection"] = "close"
                self.close_connection = True
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        for piece in pieces:
            self.wfile.write(piece)
            self.wfile.flush()
        if reply.hang_up:
            self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815 - the base's names


def tls_pair(directory: Path, host: str = "127.0.0.1") -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context holding a certificate for `host` (an IP address, or a name only a test
    proxy resolves) from a fresh self-signed CA, and a client context trusting exactly that
    CA (whose file is `directory/registry.crt`)."""
    from cryptography import x509  # noqa: PLC0415 - only the TLS tests
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "horon hostile registry")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(
            key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([_subject(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "registry.crt", directory / "registry.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_path, key_path)
    client = ssl.create_default_context(cafile=str(cert_path))
    return server, client


def _subject(host: str) -> Any:
    from cryptography import x509  # noqa: PLC0415 - only the TLS tests

    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)
