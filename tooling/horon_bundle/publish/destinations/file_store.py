"""`file:///abs/dir`: a content-addressed directory store with a write-once index.

    horon-store.json                           {"format": "horon.file-store.v1"}
    blobs/sha256/<hex>                         every published file, named by its SHA-256
    index/<id>/<version>/<target>.json         horon.store-entry.v1, written once
    yanks/<id>/<version>/<target>.json         horon.yank.v1, written once
    harness/index/<name>/<version>.json        horon.store-harness-entry.v1, written once
    .claude-plugin/marketplace.json            Claude Code's marketplace (with a public URL)
    .tmp/                                      temp files of writers in progress

Every file is written to `.tmp/` (a large one copied by the kernel and hashed beside the
copy, `store_copy`), checked, fsynced once, then linked onto its final name with link(2),
which fails when the name exists: of two publishers racing for one index entry exactly one
wins, and the loser sees the winner's entry. Nothing is ever rewritten or deleted, except the
`.tmp/w-*` files a killed publisher left: a writer holds `.tmp/` with a shared `flock` while
it writes there, and one that finds no other live writer removes them first
(`core.files.lease_directory`, docs/interrupted-runs.md) — and the marketplace, which is
derived from the entries and replaced whole after they are committed (`store_marketplace`).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from horon_bundle.core import codes, identifiers, paths
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.file_identity import FileIdentity
from horon_bundle.core.files import DirectoryLease, fsync_directory, lease_directory, remove_stale
from horon_bundle.core.hashing import Digest, hash_bytes, hash_file
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.publish.destinations import store_log, store_marketplace
from horon_bundle.publish.destinations.interface import (
    ABSENT,
    ALREADY_PUBLISHED,
    PRESENT,
    PUBLISHED,
    YANK_FORMAT,
    YANKED,
    Destination,
    FileAddress,
    RemoteState,
    YankResult,
)
from horon_bundle.publish.destinations.store_copy import (
    copy_and_hash,
    copy_judged,
    write_all,
    write_error,
)
from horon_bundle.publish.destinations.store_entries import (
    ENTRY_FORMAT,
    HARNESS_ENTRY_FORMAT,
    entry_digest,
    entry_document,
)
from horon_bundle.publish.public_url import PublicUrl
from horon_bundle.publish.release import ReleaseItem
from horon_bundle.tlog.note import Signer

STORE_FORMAT = "horon.file-store.v1"
MARKER = "horon-store.json"
MAX_STORE_DOCUMENT_BYTES = 1 << 20
TEMP_PREFIX = "w-"


class FileStore(Destination):
    def __init__(self, address: FileAddress, public_url: PublicUrl | None = None,
                 log_key: Signer | None = None) -> None:
        self.address = address
        self.root = address.root
        self.public_url = public_url  # set: the store serves a Claude Code marketplace
        self.log_key = log_key  # set: every publication is appended to the store's log
        self._lease: DirectoryLease | None = None

    def begin_writing(self) -> None:
        temps = self.root / ".tmp"
        if self._lease is None and temps.is_dir() and not temps.is_symlink():
            self._lease = lease_directory(temps, _remove_left_temps)

    def close(self) -> None:
        if self._lease is not None:
            self._lease.close()
            self._lease = None

    # --- reading -------------------------------------------------------------------------
    def _entry_path(self, plugin_id: str, version: str, target: str) -> Path:
        return self.root / "index" / plugin_id / version / f"{target}.json"

    def _yank_path(self, plugin_id: str, version: str, target: str) -> Path:
        return self.root / "yanks" / plugin_id / version / f"{target}.json"

    def blob_path(self, sha256: str) -> Path:
        return self.root / "blobs" / "sha256" / sha256

    def _harness_path(self, what: str, name: str, version: str) -> Path:
        return self.root / "harness" / what / name / f"{version}.json"

    def _item_entry_path(self, item: ReleaseItem) -> Path:
        key = item.key
        if key.kind == BundleKind.HARNESS:
            return self._harness_path("index", key.name, key.version)
        return self._entry_path(*item.native_key)

    def location(self, item: ReleaseItem) -> str:
        return "file://" + self._item_entry_path(item).as_posix()

    def read_document(self, path: Path) -> dict[str, Any] | None:
        try:
            data = read_input(path, limit=MAX_STORE_DOCUMENT_BYTES, what="store file",
                              missing_ok=True, follow_symlinks=False)
        except Refused as exc:
            code = codes.PUBLISH_UNREACHABLE if exc.codes() == [codes.INPUT_UNREADABLE.name] \
                else codes.PUBLISH_DESTINATION_STATE
            raise Refused(Finding(code, f.message) for f in exc.findings) from None
        if data is None:
            return None
        try:
            document = read_json(data, source=str(path))
        except Refused as exc:
            raise Refused(Finding(codes.PUBLISH_DESTINATION_STATE, f.message)
                          for f in exc.findings) from None
        if not isinstance(document, dict):
            raise Refused.one(codes.PUBLISH_DESTINATION_STATE, f"{path}: not a JSON object")
        return document

    def state(self, plugin_id: str, version: str, target: str) -> RemoteState:
        return self._state(self._entry_path(plugin_id, version, target),
                           self._yank_path(plugin_id, version, target), ENTRY_FORMAT)

    def harness_state(self, name: str, version: str) -> RemoteState:
        return self._state(self._harness_path("index", name, version),
                           self._harness_path("yanks", name, version), HARNESS_ENTRY_FORMAT)

    def _state(self, path: Path, yank_path: Path, entry_format: str) -> RemoteState:
        location = "file://" + path.as_posix()
        yank = self.read_document(yank_path)
        entry = self.read_document(path)
        if yank is not None:
            sha = entry_digest(path, entry, entry_format) if entry is not None else None
            return RemoteState(status=YANKED, archive_sha256=sha, location=location)
        if entry is None:
            return RemoteState(status=ABSENT, location=location)
        return RemoteState(status=PRESENT,
                           archive_sha256=entry_digest(path, entry, entry_format),
                           location=location)

    def targets_of(self, plugin_id: str, version: str) -> list[str]:
        directory = self.root / "index" / plugin_id / version
        try:
            names = sorted(p.name for p in directory.iterdir() if p.name.endswith(".json"))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{directory}: {exc.strerror}") from None
        return [name[: -len(".json")] for name in names]

    # --- checks --------------------------------------------------------------------------
    def naming_findings(self, item: ReleaseItem) -> list[Finding]:
        """The names in an index path become path components of the store: each must match
        its grammar whole (the bundle was read strictly; this is the store's own check)."""
        key = item.key
        problems = []
        if key.kind == BundleKind.NATIVE:
            if not identifiers.PLUGIN_ID.fullmatch(key.name):
                problems.append(f"id {key.name!r}")
            if not identifiers.SEMVER.fullmatch(key.version):
                problems.append(f"version {key.version!r}")
            if key.target is None or identifiers.target_problem(key.target) is not None:
                problems.append(f"target {key.target!r}")
        else:
            for what, value in (("name", key.name), ("version", key.version)):
                if "/" in value or paths.path_problem(value) is not None:
                    problems.append(f"{what} {value!r}")
        return [Finding(codes.PUBLISH_NAME, f"{item.archive.name}: {problem} cannot name an "
                                            "entry of the store") for problem in problems]

    def access_findings(self, items: list[ReleaseItem]) -> list[Finding]:
        root = self.root
        if root.is_symlink() or (root.exists() and not root.is_dir()):
            return [Finding(codes.PUBLISH_DESTINATION, f"{self.display}: not a directory")]
        if not root.is_dir():
            return [Finding(codes.PUBLISH_UNREACHABLE,
                            f"{self.display}: the directory does not exist (create it once, "
                            "empty, to start a store)")]
        try:
            names = {p.name for p in root.iterdir()}
        except OSError as exc:
            return [Finding(codes.PUBLISH_UNREACHABLE, f"{self.display}: {exc.strerror}")]
        if MARKER in names:
            try:
                marker = self.read_document(root / MARKER)
            except Refused as exc:
                return list(exc.findings)
            if marker is None or marker.get("format") != STORE_FORMAT:
                return [Finding(codes.PUBLISH_DESTINATION_STATE,
                                f"{root / MARKER}: not a {STORE_FORMAT} marker")]
        elif names - {".tmp"}:
            return [Finding(codes.PUBLISH_DESTINATION,
                            f"{self.display}: neither empty nor a horon store (no {MARKER})")]
        if not os.access(root, os.W_OK | os.X_OK):
            return [Finding(codes.PUBLISH_NOT_WRITABLE, f"{self.display}: cannot be written "
                                                        "(permission denied or read-only)")]
        return store_marketplace.listing_findings(self, items)

    # --- writing -------------------------------------------------------------------------
    def _directory(self, path: Path) -> Path:
        """Create `path` under the root, refusing a symlinked component."""
        current = self.root
        for part in path.relative_to(self.root).parts:
            current = current / part
            if current.is_symlink():
                raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                                  f"{current}: a symbolic link inside the store")
            try:
                current.mkdir(mode=0o755, exist_ok=True)
            except OSError as exc:
                raise write_error(current, exc) from None
        return path

    @contextlib.contextmanager
    def _temp(self) -> Iterator[tuple[int, Path]]:
        directory = self._directory(self.root / ".tmp")
        if self._lease is None:
            self._lease = lease_directory(directory, _remove_left_temps)
        try:
            handle, name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
        except OSError as exc:
            raise write_error(directory, exc) from None
        temp = Path(name)
        checkpoint("publish.temp")
        try:
            yield handle, temp
        finally:
            with contextlib.suppress(OSError):
                os.close(handle)
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()

    def _link_new(self, temp: Path, final: Path) -> bool:
        """Link `temp` onto `final`; False when `final` already exists (nothing changed)."""
        self._directory(final.parent)
        try:
            os.link(temp, final)
        except FileExistsError:
            return False
        except OSError as exc:
            raise write_error(final, exc) from None
        fsync_directory(final.parent)
        return True

    def _write_bytes_once(self, final: Path, data: bytes) -> bool:
        with self._temp() as (handle, temp):
            try:
                write_all(handle, data)
                os.fsync(handle)
                temp.chmod(0o444)
            except OSError as exc:
                raise write_error(temp, exc) from None
            return self._link_new(temp, final)

    def _check_blob(self, path: Path, expected: Digest) -> None:
        try:
            actual = hash_file(path)
        except OSError as exc:
            raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{path}: {exc.strerror}") from None
        if actual != expected:
            raise Refused.one(codes.PUBLISH_INTEGRITY,
                              f"{path}: holds sha256 {actual.sha256} ({actual.size} bytes), "
                              f"expected {expected.sha256} ({expected.size} bytes)")

    def _put_blob_bytes(self, data: bytes) -> Path:
        digest = hash_bytes(data)
        final = self.blob_path(digest.sha256)
        self._write_bytes_once(final, data)
        self._check_blob(final, digest)
        return final

    def _put_blob_file(self, source: Path, expected: Digest,
                       identity: FileIdentity | None = None) -> Path:
        """Store a large file: copied and hashed in one pass (or, for an archive the
        preflight judged and that still has that `identity`, copied by the kernel with no
        read at all: `store_copy.copy_judged`), fsynced once, linked. A blob already under
        the name (an interrupted run, a racing publisher) is hashed instead: the name alone
        proves nothing."""
        final = self.blob_path(expected.sha256)
        if not final.exists():
            with self._temp() as (handle, temp):
                try:
                    judged = identity is not None and copy_judged(source, handle, identity)
                    actual = expected if judged else copy_and_hash(source, handle, temp)
                    if actual == expected:
                        os.fsync(handle)
                        temp.chmod(0o444)
                except OSError as exc:
                    raise write_error(temp, exc) from None
                if actual != expected:
                    raise Refused.one(codes.PUBLISH_INTEGRITY,
                                      f"{source.name}: sha256 {actual.sha256} now, "
                                      f"{expected.sha256} when checked; nothing was published")
                if self._link_new(temp, final):
                    return final
        self._check_blob(final, expected)
        return final

    def _ensure_marker(self) -> None:
        if not (self.root / MARKER).exists():
            self._write_bytes_once(self.root / MARKER, canonical_bytes({"format": STORE_FORMAT}))

    def upload(self, item: ReleaseItem) -> dict[str, str]:
        self._ensure_marker()
        archive = self._put_blob_file(item.archive, item.digest, item.identity)
        self._put_blob_bytes(item.manifest_bytes)
        for side in item.side_files:
            self._put_blob_bytes(side.data)
        return {"blob": "file://" + archive.as_posix()}

    def commit(self, item: ReleaseItem) -> str:
        key = item.key
        if key.kind == BundleKind.HARNESS:
            yank, entry_format = (self._harness_path("yanks", key.name, key.version),
                                  HARNESS_ENTRY_FORMAT)
        else:
            yank, entry_format = self._yank_path(*item.native_key), ENTRY_FORMAT
        if yank.exists():
            raise Refused.one(codes.PUBLISH_YANKED, f"{item.label}: was yanked and can never "
                                                    "be reused")
        path = self._item_entry_path(item)
        if self._write_bytes_once(path, canonical_bytes(entry_document(item))):
            return PUBLISHED
        existing = self.read_document(path)
        sha = entry_digest(path, existing, entry_format) if existing is not None else None
        if sha == item.digest.sha256:
            return ALREADY_PUBLISHED
        raise Refused.one(codes.PUBLISH_CONFLICT,
                          f"{item.label}: {path} holds archive sha256 {sha}, this release has "
                          f"{item.digest.sha256} (another publisher won)")

    def replace_file(self, final: Path, data: bytes, *,
                     before_rename: Callable[[], None] | None = None) -> None:
        """Replace `final` inside the store whole: a temp file in `.tmp/`, fsynced, renamed
        over it (a reader sees the old bytes or the new ones, never a mixture)."""
        self._directory(final.parent)
        with self._temp() as (handle, temp):
            try:
                write_all(handle, data)
                os.fsync(handle)
                temp.chmod(0o644)
                if before_rename is None:
                    checkpoint("publish.marketplace")
                else:
                    before_rename()
                temp.replace(final)
            except OSError as exc:
                raise write_error(final, exc) from None
        fsync_directory(final.parent)

    def refresh_listing(self, items: list[ReleaseItem]) -> dict[str, Any] | None:
        return store_marketplace.refresh(self, items)

    def log_publications(self, items: list[ReleaseItem],
                         yanks: list[YankResult]) -> dict[str, Any] | None:
        places = [self._item_entry_path(item) for item in items]
        places += [self._yank_path(y.plugin_id, y.version, y.target) for y in yanks]
        return store_log.log_entries(self, self.log_key,
                                     [p.relative_to(self.root).as_posix() for p in places])

    def yank(self, plugin_id: str, version: str, target: str, reason: str) -> YankResult:
        state = self.state(plugin_id, version, target)
        if state.archive_sha256 is None:
            raise Refused.one(codes.YANK_NOT_PUBLISHED,
                              f"{plugin_id} {version} {target}: not published in {self.display}")
        record = {"format": YANK_FORMAT, "id": plugin_id, "version": version, "target": target,
                  "archive_sha256": state.archive_sha256, "reason": reason,
                  "yanked_at": _now()}
        written = (state.status != YANKED and self._write_bytes_once(
            self._yank_path(plugin_id, version, target), canonical_bytes(record)))
        return YankResult(plugin_id=plugin_id, version=version, target=target,
                          archive_sha256=state.archive_sha256, location=state.location,
                          already=not written)


def _remove_left_temps(directory: Path) -> list[Path]:
    """`.tmp/w-*` files of killed writers (called only while no other writer is live)."""
    return remove_stale(directory, TEMP_PREFIX)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
