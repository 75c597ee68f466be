"""`fetch REF --into DIR`, what a sandbox does: the digest before any entry, the full harness
judge, the one archive reader's safety, a new directory by one rename — and nothing at all
under DIR when anything is refused or the fetch is killed."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.harness_support import PLUGIN_NAME, PLUGIN_VERSION, built_zip
from tests.helpers import REPO, assert_refused, cli, tree_snapshot
from tests.install_support import Paused, hb


@pytest.fixture(name="harness_zip", scope="module")
def harness_zip_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_zip(tmp_path_factory.mktemp("fetch-zip"))


def _ref(path: Path, name: str = PLUGIN_NAME) -> Path:
    """`<zip>.ref.json` for whatever bytes `path` holds now."""
    ref = Path(f"{path}.ref.json")
    ref.write_text(json.dumps({"name": name,
                               "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    return ref


def _rezipped(source: Path, target: Path, change: dict[str, bytes | None],
              modes: dict[str, int] | None = None) -> Path:
    """`source` written again with entries replaced (None: removed) or added."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as out:
        names = [i.filename for i in original.infolist()]
        for info in original.infolist():
            if info.filename in change:
                continue
            out.writestr(info, original.read(info))
        for name, data in change.items():
            if data is not None:
                entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                entry.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o644) << 16
                out.writestr(entry, data)
        assert names  # the source had entries
    return target


def test_fetch_from_the_home_store_into_a_new_directory(harness_zip: Path,
                                                        tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    ref = tmp_path / "handed" / "guard.ref.json"  # a ref alone: no zip beside it
    ref.parent.mkdir()
    shutil.copy(f"{harness_zip}.ref.json", ref)
    into = tmp_path / "sandbox" / "guard-kit"
    into.parent.mkdir()
    result = cli("fetch", ref, "--into", into, "--home", home, "--json")
    assert result.status == 0, result.stderr
    document = result.json()
    assert (document["name"], document["version"], document["found"]) == (
        PLUGIN_NAME, PLUGIN_VERSION, "home")
    with zipfile.ZipFile(harness_zip) as archive:
        entries = {i.filename: archive.read(i) for i in archive.infolist()}
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in archive.infolist()}
    unpacked = {p.relative_to(into).as_posix(): p for p in into.rglob("*") if p.is_file()}
    assert {k: v.read_bytes() for k, v in unpacked.items()} == entries
    assert document["files"] == len(entries)
    for name, path in unpacked.items():  # modes normalised, the executable bit kept
        assert stat.S_IMODE(path.stat().st_mode) == (0o755 if modes[name] & 0o100 else 0o644)
    assert stat.S_IMODE(unpacked["hooks/guard.sh"].stat().st_mode) == 0o755
    for directory in [into, *(p for p in into.rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o755
    assert sorted(p.name for p in into.parent.iterdir()) == ["guard-kit"]  # no staging left
    assert cli("verify", into).status == 0  # an unpacked harness bundle verifies as such


def test_fetch_takes_the_zip_beside_the_ref_or_zip(harness_zip: Path, tmp_path: Path) -> None:
    beside = cli("fetch", f"{harness_zip}.ref.json", "--into", tmp_path / "a",
                 "--home", tmp_path / "no-home", "--json")
    assert beside.status == 0, beside.stderr
    assert beside.json()["found"] == "beside the ref"
    moved = tmp_path / "moved.zip"
    shutil.copy(harness_zip, moved)
    given = cli("fetch", f"{harness_zip}.ref.json", "--into", tmp_path / "b", "--zip", moved,
                "--json")
    assert given.status == 0, given.stderr
    assert given.json()["found"] == "--zip"
    assert tree_snapshot(tmp_path / "a") == tree_snapshot(tmp_path / "b")


def test_fetch_into_an_existing_directory_is_refused(harness_zip: Path, tmp_path: Path) -> None:
    for existing in ("empty-dir", "file", "link"):
        into = tmp_path / existing
        if existing == "empty-dir":
            into.mkdir()
        elif existing == "file":
            into.write_text("mine")
        else:
            into.symlink_to(tmp_path / "elsewhere")
        before = tree_snapshot(tmp_path)
        result = cli("fetch", f"{harness_zip}.ref.json", "--into", into)
        assert_refused(result, "fetch.exists")
        assert tree_snapshot(tmp_path) == before
    assert not (tmp_path / "elsewhere").exists()


def test_fetch_into_a_missing_parent_is_refused(harness_zip: Path, tmp_path: Path) -> None:
    before = tree_snapshot(tmp_path)
    assert_refused(cli("fetch", f"{harness_zip}.ref.json", "--into", tmp_path / "no" / "dir"),
                   "fetch.into")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant in it, and no sticky bit
    assert_refused(cli("fetch", f"{harness_zip}.ref.json", "--into", shared / "x"),
                   "fetch.into")
    assert tree_snapshot(tmp_path) == {**before, "shared": "dir"}


def test_a_long_directory_name_is_fetched_and_one_too_long_refused(harness_zip: Path,
                                                                   tmp_path: Path) -> None:
    """The staging name `.<DIR>.fetch-<16 hex>` is 24 bytes longer than DIR's: a DIR name the
    file system takes (here 240 bytes, of two-byte characters too) must not fail as a write
    error (fetch.io, exit 3); a name it cannot take is fetch.into, nothing written."""
    parent = tmp_path / "sandboxes"
    parent.mkdir()
    for name in ("a" * 240, "\u00e9" * 120):
        result = cli("fetch", f"{harness_zip}.ref.json", "--into", parent / name)
        assert result.status == 0, result.stderr
        assert (parent / name / ".claude-plugin" / "plugin.json").is_file()
    assert sorted(p.name for p in parent.iterdir()) == sorted(("a" * 240, "\u00e9" * 120))
    before = tree_snapshot(tmp_path)
    result = cli("fetch", f"{harness_zip}.ref.json", "--into", parent / ("b" * 256))
    assert_refused(result, "fetch.into")
    assert "a name longer than 255 bytes" in result.stderr
    assert tree_snapshot(tmp_path) == before


def test_a_tampered_stored_zip_is_caught_before_any_entry_is_read(harness_zip: Path,
                                                                  tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    [stored] = (home / "harness-bundles" / "sha256").iterdir()
    stored.chmod(0o644)
    data = bytearray(stored.read_bytes())
    data[10:40] = b"\xff" * 30  # its first local header: no zip reader could read it now
    stored.write_bytes(bytes(data))
    ref = tmp_path / "alone.ref.json"
    shutil.copy(f"{harness_zip}.ref.json", ref)
    before = tree_snapshot(tmp_path)
    result = cli("fetch", ref, "--into", tmp_path / "sandbox", "--home", home)
    assert_refused(result, "ref.digest")
    assert result.codes == ["ref.digest"]  # no archive.* finding: no entry was read
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize(("case", "code"), [
    ("traversal", "archive.traversal"),
    ("absolute", "archive.absolute"),
    ("link", "archive.link"),
    ("setuid", "layout.mode"),
    ("checksum", "checksum.mismatch"),
    ("other-name", "ref.name"),
])
def test_a_zip_the_ref_pins_but_that_is_unsafe_writes_nothing(harness_zip: Path, tmp_path: Path,
                                                              case: str, code: str) -> None:
    """The digest matches (the ref was made for these bytes) yet the zip is refused before
    the first write, and nothing appears under DIR or beside it."""
    hostile = tmp_path / "dist" / "guard-kit-1.2.0.zip"
    hostile.parent.mkdir()
    changes: dict[str, dict[str, bytes | None]] = {
        "traversal": {"../escape.sh": b"#!/bin/sh\n"},
        "absolute": {"/tmp/escape.sh": b"#!/bin/sh\n"},
        "link": {"hooks/evil": b"/etc/passwd"},
        "setuid": {"hooks/guard.sh": b"#!/bin/sh\n"},
        "checksum": {"commands/review.md": b"---\ndescription: other\n---\nOther.\n"},
        "other-name": {},
    }
    modes = {"link": {"hooks/evil": stat.S_IFLNK | 0o777},
             "setuid": {"hooks/guard.sh": stat.S_IFREG | 0o4755}}.get(case)
    _rezipped(harness_zip, hostile, changes[case], modes)
    ref = _ref(hostile, name="other-plugin" if case == "other-name" else PLUGIN_NAME)
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    result = cli("fetch", ref, "--into", sandbox / "guard")
    assert_refused(result, code)
    assert list(sandbox.iterdir()) == []
    assert not (tmp_path / "escape.sh").exists()


def test_a_missing_or_malformed_ref_is_refused(harness_zip: Path, tmp_path: Path) -> None:
    ref = tmp_path / "x.ref.json"
    ref.write_text('{"name": "guard-kit"}')
    assert_refused(cli("fetch", ref, "--into", tmp_path / "a"), "ref.invalid")
    shutil.copy(f"{harness_zip}.ref.json", ref)
    assert_refused(cli("fetch", ref, "--into", tmp_path / "a", "--home", tmp_path / "none"),
                   "ref.zip-missing")
    link = tmp_path / "link.zip"
    link.symlink_to(harness_zip)
    assert_refused(cli("fetch", ref, "--into", tmp_path / "a", "--zip", link),
                   "ref.zip-missing")
    assert not (tmp_path / "a").exists()


@pytest.mark.process
def test_a_killed_fetch_leaves_nothing_under_dir(harness_zip: Path, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    into = sandbox / "guard"
    paused = Paused(["fetch", f"{harness_zip}.ref.json", "--into", into], "unpacked",
                    tmp_path / "pause")
    staging = [p.name for p in sandbox.iterdir()]
    assert len(staging) == 1 and staging[0].startswith(".guard.fetch-")  # beside DIR
    paused.kill()
    assert not into.exists()
    again = cli("fetch", f"{harness_zip}.ref.json", "--into", into)
    assert again.status == 0, again.stderr
    assert into.is_dir()


@pytest.mark.slow
@pytest.mark.process
def test_a_zip_changed_while_it_is_unpacked_creates_no_dir(harness_zip: Path,
                                                          tmp_path: Path) -> None:
    """The zip is checked unchanged before DIR is created, not after: a refusal must not
    leave a complete DIR behind (it did: install.race, exit 1, and DIR in place)."""
    source = tmp_path / "source"
    source.mkdir()
    archive = source / harness_zip.name
    shutil.copy(harness_zip, archive)
    shutil.copy(f"{harness_zip}.ref.json", source)
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    into = sandbox / "guard"
    paused = Paused(["fetch", f"{archive}.ref.json", "--into", into], "unpacked",
                    tmp_path / "pause")
    info = archive.stat()
    os.utime(archive, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))  # same bytes
    result = paused.resume()
    assert_refused(result, "install.race")
    assert "changed while it was unpacked" in result.stderr
    assert list(sandbox.iterdir()) == []


@pytest.mark.slow
@pytest.mark.process
def test_a_dir_that_appears_while_fetch_runs_is_not_replaced(harness_zip: Path,
                                                             tmp_path: Path) -> None:
    into = tmp_path / "guard"
    paused = Paused(["fetch", f"{harness_zip}.ref.json", "--into", into], "unpacked",
                    tmp_path / "pause")
    into.mkdir()
    (into / "mine").write_text("kept")
    result = paused.resume()
    assert_refused(result, "fetch.exists")
    assert [p.name for p in into.iterdir()] == ["mine"]
    assert [p.name for p in tmp_path.iterdir() if ".fetch-" in p.name] == []


_DISK_FULL = r"""
import json, os, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.helpers import cli, tree_snapshot
mount, ref = Path(sys.argv[2]), sys.argv[3]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
filler = mount / "filler"
fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError:
    pass
os.close(fd)
before = tree_snapshot(mount)
full = cli("fetch", ref, "--into", mount / "guard")
seen = dict(status=full.status, codes=full.codes, traceback="Traceback" in full.stderr,
            stderr=full.stderr, same=tree_snapshot(mount) == before)
filler.unlink()
seen["after"] = cli("fetch", ref, "--into", mount / "guard").status
print(json.dumps(seen))
"""


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "--", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(not _namespaces_work(), reason="no private mount namespace (unshare -rm)")
def test_a_full_disk_is_fetch_io_and_leaves_nothing(harness_zip: Path, tmp_path: Path) -> None:
    """A real tmpfs, filled: the kernel refuses the first write (no ENOSPC is injected)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(["unshare", "-rm", "--", sys.executable, "-c", _DISK_FULL, REPO,
                           mount, f"{harness_zip}.ref.json"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert (seen["status"], seen["codes"], seen["traceback"]) == (3, ["fetch.io"], False), seen
    assert seen["same"], seen  # no DIR, no staging directory left beside it
    assert seen["after"] == 0


@contextmanager
def _descriptors(soft: int) -> Iterator[None]:
    """This process may hold at most `soft` descriptors (the usual soft limit is 1,024)."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_a_plugin_of_more_directories_than_descriptors_fetches(tmp_path: Path) -> None:
    """Before, fetch held a descriptor for every directory it made until the end, and with
    1,024 descriptors a plugin of 1,500 packages was `fetch.io` ("Too many open files"). The
    same, smaller: 400 packages with 200 descriptors to spare beyond those already open."""
    def packages(plugin: Path) -> None:
        for index in range(400):
            package = plugin / "node_modules" / f"p{index:04d}"
            package.mkdir(parents=True)
            (package / "index.js").write_text(f"module.exports = {index};\n")
    archive = built_zip(tmp_path / "build", edit=packages)
    into = tmp_path / "sandbox"
    with _descriptors(len(list(Path("/proc/self/fd").iterdir())) + 200):
        fetched = cli("fetch", f"{archive}.ref.json", "--into", into, "--json")
    assert fetched.status == 0, fetched.stderr
    assert fetched.json()["files"] == 400 + 13
    assert len(list((into / "node_modules").iterdir())) == 400
