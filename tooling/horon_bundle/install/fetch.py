"""`fetch REF --into DIR`: what a sandbox does with a `{name, sha256}` ref.

1. the ref is read strictly; the zip is found: `--zip PATH`, else the agent home's store
   (`harness-bundles/sha256/<sha256>.zip`), else `X.zip` beside `X.zip.ref.json`;
2. its SHA-256 is taken through the descriptor it was opened with and compared with the ref
   **before any entry is read** (`ref.digest`);
3. it gets the full harness judge (through the same descriptor; `ref.name` included) and is
   unpacked by the one archive reader — every entry validated before the first write: no
   link, no `..`, no absolute path, no duplicate, modes normalised, the executable bit kept —
   into a staging directory `.<DIR>.fetch-<random>` beside DIR (0700 until finished);
4. the staged directory is judged again and must hold exactly the digests the zip held; the
   zip must not have changed meanwhile;
5. the staging directory is renamed onto DIR without replacing anything: DIR must not exist
   (`fetch.exists`), so a fetch either creates the whole directory or nothing. A killed fetch
   leaves nothing under DIR (at most its staging directory beside it).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horon_bundle.core import codes, paths
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.install.copies import through_descriptor
from horon_bundle.install.dirs import DIR_FLAGS, READ_FLAGS, lstat_at, regular_fd
from horon_bundle.install.harness_store import Opened, judge_opened, open_file_at
from horon_bundle.install.home import open_home, require_posix
from horon_bundle.install.layout import DIGEST_DIR, HARNESS_DIR, stored_name, stored_where
from horon_bundle.install.staging import Staging
from horon_bundle.model.harness.ref import BundleRef, zip_of_ref
from horon_bundle.verify.audit import AuditOptions
from horon_bundle.verify.harness.ref import read_ref
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.route import judge_target

FETCH_FORMAT = "horon.fetch-result.v1"
FROM_ZIP, FROM_HOME, FROM_BESIDE = "--zip", "home", "beside the ref"
_NAME_HINT = "Name the new directory with a portable name (no control character, '..' or ':')."
_PARENT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchRequest:
    ref: Path
    into: Path
    zip_path: Path | None = None
    home: Path | None = None  # the agent home whose store is searched (None: not searched)
    harness: HarnessOptions = field(default_factory=HarnessOptions)


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchResult:
    name: str
    version: str
    sha256: str
    into: Path
    found: str   # where the zip came from: --zip, home, beside the ref
    zip: str     # its path, for people
    files: int

    def to_json(self) -> dict[str, Any]:
        return {"format": FETCH_FORMAT, "ok": True, "name": self.name,
                "version": self.version, "sha256": self.sha256, "into": str(self.into),
                "found": self.found, "zip": self.zip, "files": self.files}


def fetch(request: FetchRequest) -> FetchResult:
    require_posix()
    ref = read_ref(request.ref)
    into = request.into if request.into.is_absolute() else Path.cwd() / request.into
    name = into.name
    if not name or paths.path_problem(name) or name in (".", ".."):
        raise Refused.one(codes.FETCH_INTO, f"--into {request.into}: not a directory name",
                          _NAME_HINT)
    parent = _open_parent(into)
    try:
        if len(os.fsencode(name)) > _name_max(parent):
            raise Refused.one(codes.FETCH_INTO, f"--into {request.into}: a name longer than "
                                                f"{_name_max(parent)} bytes", _NAME_HINT)
        if lstat_at(parent, name, str(into)) is not None:
            raise Refused.one(codes.FETCH_EXISTS, f"{into} exists; fetch creates a new "
                                                  "directory")
        with _zip_for(ref, request) as (opened, found):
            before = opened.identity
            digest = opened.digest()  # a plain read of the bytes: no entry is opened
            if digest.sha256 != ref.sha256:
                raise Refused.one(codes.REF_DIGEST, f"{opened.where}: sha256 {digest.sha256} "
                                                    f"!= {request.ref.name} {ref.sha256}")
            judged = judge_opened(opened, ref, harness=request.harness)
            if isinstance(judged, list):
                raise Refused(judged)
            count = _unpack(opened, judged, parent, into, before)
            assert judged.catalogue is not None
            return FetchResult(name=ref.name, version=judged.catalogue.version,
                               sha256=ref.sha256, into=into, found=found,
                               zip=opened.where, files=count)
    finally:
        os.close(parent)


def _name_max(directory: int) -> int:
    """The longest file name the directory's file system takes (255 where it does not say)."""
    try:
        return int(os.fpathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def staging_prefix(name: str, name_max: int) -> str:
    """`.<name>.fetch-`, the name cut (at a character boundary) so that the staging name,
    with its 16 random hex digits, fits the file system like DIR's own name does."""
    room = name_max - len(".") - len(".fetch-") - 16
    cut = os.fsencode(name)[:max(room, 1)].decode("utf-8", "ignore") or "x"
    return f".{cut}.fetch-"


def _open_parent(into: Path) -> int:
    """DIR's parent, as the user named it (a link they made is followed, once)."""
    try:
        fd = os.open(into.parent, _PARENT_FLAGS)
    except FileNotFoundError:
        raise Refused.one(codes.FETCH_INTO, f"{into.parent} does not exist") from None
    except NotADirectoryError:
        raise Refused.one(codes.FETCH_INTO, f"{into.parent} is not a directory") from None
    except OSError as exc:
        raise Refused.one(codes.FETCH_INTO, f"{into.parent}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        os.close(fd)
        raise Refused.one(codes.FETCH_INTO, f"{into.parent}: writable by every user (mode "
                                            f"{stat.S_IMODE(mode):o}) without the sticky bit")
    return fd


@contextlib.contextmanager
def _zip_for(ref: BundleRef, request: FetchRequest) -> Iterator[tuple[Opened, str]]:
    """The zip the ref selects, opened, and where it was found."""
    if request.zip_path is not None:
        with _open_path(request.zip_path, f"--zip {request.zip_path}") as opened:
            yield opened, FROM_ZIP
        return
    if request.home is not None:
        with contextlib.ExitStack() as stack:
            stored = _from_home(ref, request.home, stack)
            if stored is not None:
                yield stored, FROM_HOME
                return
    beside = zip_of_ref(request.ref)
    if beside is None or not os.path.lexists(beside):
        where = "" if request.home is None else f" nor {stored_where(ref.sha256)} in " \
                                                 f"{request.home}"
        raise Refused.one(codes.REF_ZIP_MISSING,
                          f"{request.ref.name}: no zip beside it{where}; pass --zip PATH")
    with _open_path(beside, str(beside)) as opened:
        yield opened, FROM_BESIDE


def _from_home(ref: BundleRef, home_path: Path, stack: contextlib.ExitStack) -> Opened | None:
    home = open_home(home_path)
    if home is None:
        return None
    stack.callback(os.close, home.fd)
    store = home.area(HARNESS_DIR, DIGEST_DIR, create=False)
    if store is None:
        return None
    stack.enter_context(store)
    opened = open_file_at(store.fd, stored_name(ref.sha256), stored_where(ref.sha256),
                          store.path() / stored_name(ref.sha256))
    if opened is not None:
        stack.enter_context(opened)
    return opened


@contextlib.contextmanager
def _open_path(path: Path, label: str) -> Iterator[Opened]:
    """A zip named by the user: its parent opened as named, the zip itself not a link."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        parent = os.open(absolute.parent, _PARENT_FLAGS)
    except OSError as exc:
        raise Refused.one(codes.REF_ZIP_MISSING, f"{label}: {exc.strerror}") from None
    try:
        try:
            fd = os.open(absolute.name, READ_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise Refused.one(codes.REF_ZIP_MISSING, f"{label}: {exc.strerror} (a link is "
                                                     "not followed)") from None
        if not regular_fd(fd):
            os.close(fd)
            raise Refused.one(codes.REF_ZIP_MISSING, f"{label}: not a regular file")
        with Opened(parent, absolute.name, fd, str(path), absolute) as opened:
            yield opened
    finally:
        os.close(parent)


def _unpack(opened: Opened, judged: HarnessReport, parent: int, into: Path,
            before: tuple[int, ...]) -> int:
    """Every entry into staging beside DIR, judged again, renamed onto DIR; the file count.
    The zip must still be the file hashed (`before`) when DIR is created: a refusal after the
    rename would leave DIR behind."""
    name = into.name
    try:
        with open_bundle(opened.path()) as source, \
                Staging(parent, str(into.parent), into.parent, [],
                        prefix=staging_prefix(name, _name_max(parent))) as staging:
            for path in sorted(source.files):  # validated, every one, before this first write
                stream = source.open(path)
                try:
                    staging.add_file(path, stream, executable=bool(source.files[path].executable))
                finally:
                    stream.close()
            staging.finish()
            _check_staged(staging, parent, judged)
            checkpoint("unpacked")
            staging.recheck()
            _same_parent(into, parent)
            if not opened.unchanged(before):
                raise Refused.one(codes.INSTALL_RACE,
                                  f"{opened.where} changed while it was unpacked")
            staging.commit(parent, name, str(into))
            return len(source.files)
    except Refused as exc:
        raise Refused(_for_fetch(f, into) for f in exc.findings) from None


def _check_staged(staging: Staging, parent: int, judged: HarnessReport) -> None:
    fd = os.open(staging.name, DIR_FLAGS, dir_fd=parent)
    try:
        before = os.fstat(fd)
        report = judge_target(through_descriptor(parent, staging.name,
                                                 staging.area_path / staging.name),
                              AuditOptions(), HarnessOptions(), pinned=True)
        info = lstat_at(parent, staging.name, staging.where)
    finally:
        os.close(fd)
    if info is None or (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
        raise Refused.one(codes.INSTALL_RACE, f"{staging.where} was replaced while it was "
                                              "being verified")
    if not report.ok or report.digests != judged.digests:
        raise Refused([Finding(codes.INSTALL_INTEGRITY, f"{staging.where}: the unpacked files "
                                                        "differ from the zip's"),
                       *report.findings])


def _same_parent(into: Path, parent: int) -> None:
    try:
        info = into.parent.stat()
    except OSError:
        info = None
    current = os.fstat(parent)
    if info is None or (info.st_dev, info.st_ino) != (current.st_dev, current.st_ino):
        raise Refused.one(codes.INSTALL_RACE, f"{into.parent} was replaced while fetch ran")


def _for_fetch(finding: Finding, into: Path) -> Finding:
    """Install's staging codes in fetch's words: an existing DIR, a failed write."""
    if finding.code is codes.INSTALL_RACE and "appeared" in finding.message:
        return Finding(codes.FETCH_EXISTS, f"{into} appeared while fetch ran; nothing was "
                                           "replaced")
    if finding.code is codes.INSTALL_IO:
        return Finding(codes.FETCH_IO, finding.message)
    return finding
