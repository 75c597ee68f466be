"""Sending an archive's bytes while preflight verifies it; storing them only once it passed.

Preflight's verify of a large archive and its upload each take about as long as the other
(docs/benchmarks.md), and they use different resources: the verify one core, the upload the
network and a little of the other core. So as preflight starts on an archive, this uploader
(one thread, its own connection and credentials exchange) opens a blob upload session in the
archive's repository and sends the whole file as the session's one chunk (`PATCH`); it
*finishes* nothing. Only `upload`, after the whole release passed preflight, closes a session
with the digest the verify took (`PUT ?digest=`): the registry stores the blob only if the
bytes it received have that digest, so a file changed after it was judged is stored under no
name (`publish.integrity`), exactly as with the upload after preflight. A release that fails
preflight, or a run that ends early, cancels every session (`DELETE`): nothing is stored,
nothing is visible. Anything that goes wrong ahead — a registry without chunked uploads,
a refused request, a deadline — is only a missed head start: the archive is uploaded after
preflight as before, where a failure is reported.

The repository comes from the archive's plugin.json read before its verify (a hint: the
session is used only when the verified item names the same repository and size).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.destinations.oci_file_body import FileBody


class _StoppableBody(FileBody):
    """The file, piece by piece, until the uploader is closed (a refused preflight does not
    wait for a large upload it will cancel anyway)."""

    def __init__(self, path: Path, size: int, stop: threading.Event) -> None:
        super().__init__(path, size, path.name)
        self._stop = stop

    def _check(self) -> None:
        if self._stop.is_set():
            raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.where}: upload stopped")


@dataclass(slots=True)
class _Session:
    repository: str
    path: Path
    size: int
    location: str | None = None  # set once the session is open; None once closed or dropped
    sent: Future[bool] | None = field(default=None, repr=False)


class AheadUploader:
    """Archives started by `start`, sent in order, finished or cancelled later. Every use of
    the registry client happens on the uploader's one thread (a client is not shared)."""

    def __init__(self, connect: Callable[[], RegistryClient]) -> None:
        self._connect = connect
        self._client: RegistryClient | None = None
        self._sessions: dict[Path, _Session] = {}
        self._stop = threading.Event()
        self._worker: ThreadPoolExecutor | None = None

    def _on_thread(self) -> ThreadPoolExecutor:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="upload-ahead")
        return self._worker

    def _client_here(self) -> RegistryClient:
        if self._client is None:
            self._client = self._connect()
        return self._client

    def start(self, path: Path, repository: str, size: int) -> None:
        """Send `path` (`size` bytes) into a new session of `repository`, in the background."""
        if path in self._sessions or size <= 0 or self._stop.is_set():
            return
        session = _Session(repository, path, size)
        self._sessions[path] = session
        session.sent = self._on_thread().submit(self._send, session)

    def _send(self, session: _Session) -> bool:
        try:
            client = self._client_here()
            session.location = client.open_upload(session.repository)
            session.location = client.send_chunk(
                session.repository, session.location,
                _StoppableBody(session.path, session.size, self._stop))
        except Exception:  # noqa: BLE001 - any failure ahead is only a missed head start
            self._drop(session)
            return False
        return True

    def _drop(self, session: _Session) -> None:
        """Cancel a session (best effort: an abandoned session expires anyway)."""
        location, session.location = session.location, None
        if location is not None and self._client is not None:
            with contextlib.suppress(Exception):
                self._client.cancel_upload(location)

    def finish(self, path: Path, repository: str, digest: Digest) -> bool:
        """Close the session sent for `path` with `digest` (the verify's): True when the
        registry stored the blob from it; False when there is no usable session (the caller
        uploads the archive itself). A registry that received other bytes is refused, as for
        any upload (`publish.integrity`)."""
        session = self._sessions.pop(path, None)
        if session is None or session.sent is None:
            return False
        worker = self._on_thread()
        if not session.sent.result() or (session.repository, session.size) != (repository,
                                                                              digest.size):
            worker.submit(self._drop, session).result()
            return False

        def close_session() -> None:
            location, session.location = session.location, None
            assert location is not None
            self._client_here().finish_upload(repository, location, digest)

        worker.submit(close_session).result()
        return True

    def discard(self, path: Path) -> None:
        """The archive needs no upload (its blob is already there): cancel its session."""
        session = self._sessions.pop(path, None)
        if session is not None and session.sent is not None:
            session.sent.result()
            self._on_thread().submit(self._drop, session).result()

    def close(self) -> None:
        """Cancel every session not finished (a refused preflight, a run that failed) and
        stop the thread; a body being sent stops at its next piece."""
        self._stop.set()
        if self._worker is None:
            return
        for path in list(self._sessions):
            self.discard(path)

        def close_client() -> None:
            if self._client is not None:
                self._client.close()
                self._client = None

        self._worker.submit(close_client).result()
        self._worker.shutdown(wait=True)
