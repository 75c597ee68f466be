"""A bundle changing under verify, deep and long trees, deep TOML, absurd timeouts.

- Each file is opened once (`O_NOFOLLOW | O_NONBLOCK`), judged with `fstat` and hashed
  through that descriptor: a file swapped for a FIFO, a directory, a link, another file, or
  deleted between the walk and the read is `layout.changed` (never a hang or exit 4). These
  run the CLI's `main` in-process, with the swap made at the exact moment between walk and
  read.
- 1,100 nested directories and a path longer than PATH_MAX are `layout.limit`, walked
  iteratively through directory descriptors (no RecursionError, no ENAMETOOLONG).
- A 50,000-deep TOML policy, in every construct that nests, is `policy.invalid` at once.
- `doctor --timeout 1e300` is a usage error.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from horon_bundle.cli.main import main
from horon_bundle.core import tree, tree_stream
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import CHUNK, hash_stream
from horon_bundle.verify import limits
from horon_bundle.verify.reading import directory
from horon_bundle.verify.reading.archive_source import ArchiveSource
from horon_bundle.verify.reading.directory import DirectorySource
from horon_bundle.verify.reading.interface import BundleFile
from tests.conftest import BuiltExample
from tests.helpers import assert_refused, cli, copy_bundle, tree_snapshot

LIBRARY = "lib/libhoron_example.so"


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail (rather than hang) if the test takes more than 60 s."""
    def expired(signum: int, frame: FrameType | None) -> None:
        # not TimeoutError: an OSError, which the verifier would report as layout.changed
        pytest.fail("the verifier blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _link(path: Path) -> None:
    path.unlink()
    path.symlink_to("/etc/passwd")


def _hard_link(path: Path) -> None:
    os.link(path, path.with_name("second-name"))


def _other_file(path: Path) -> None:
    """Same bytes renamed over it: another inode, not the file that was judged."""
    twin = path.with_name(path.name + ".twin")
    twin.write_bytes(path.read_bytes())
    twin.replace(path)


def _grown(path: Path) -> None:
    with path.open("ab") as stream:
        stream.write(b"\0" * 4096)


def _world_writable(path: Path) -> None:
    path.chmod(0o666)


SWAPS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo, "directory": _directory, "deleted": Path.unlink, "symlink": _link,
    "hard link": _hard_link, "another inode": _other_file, "grown": _grown,
    "world-writable": _world_writable,
}


@pytest.mark.parametrize("target", [LIBRARY, "LICENSE", "plugin.json"])
@pytest.mark.parametrize("swap", sorted(SWAPS))
@pytest.mark.usefixtures("deadline")
def test_a_file_swapped_between_walk_and_read(example_release: BuiltExample, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str], *,
                                              target: str, swap: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    original = DirectorySource.open

    def racing(self: DirectorySource, path: str, *, resumable: bool = False) -> object:
        if path == target:
            SWAPS[swap](self.root / path)
        return original(self, path, resumable=resumable)

    monkeypatch.setattr(DirectorySource, "open", racing)
    before = tree_snapshot(tmp_path)
    status = main(["verify", str(bundle)])
    captured = capsys.readouterr()
    assert status == 1, captured.err
    assert "ERROR layout.changed:" in captured.err
    assert "Traceback" not in captured.err and "INTERNAL ERROR" not in captured.err
    touched = {f"{bundle.name}/{target}", f"{bundle.name}/{Path(target).parent}/second-name"
               if "/" in target else f"{bundle.name}/second-name"}
    after = {k: v for k, v in tree_snapshot(tmp_path).items() if k not in touched}
    assert after == {k: v for k, v in before.items() if k not in touched}


@pytest.mark.parametrize("how", ["read", "readinto"])
def test_a_file_growing_while_it_is_read(example_release: BuiltExample,
                                         tmp_path: Path, how: str) -> None:
    """Opened and judged at its walked size, then appended to while hashed: refused at the
    first byte past the judged size, never read to its (unbounded) end — whether read in
    chunks or into the reused buffer `hash_stream` gives it."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    source = DirectorySource(bundle)
    stream = source.open("LICENSE")
    with (bundle / "LICENSE").open("ab") as grow:
        grow.write(b"\0" * (1 << 20))

    def drain() -> None:
        if how == "readinto":
            hash_stream(stream)  # type: ignore[arg-type]
            return
        while stream.read(4096):
            pass

    with pytest.raises(Refused) as caught:
        drain()
    stream.close()
    source.close()
    assert caught.value.codes() == ["layout.changed"]
    assert "grew while it was read" in caught.value.findings[0].message


def _remove_lib_as_it_is_listed(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lib/` (and the library in it) vanish just as the walk comes to list it."""
    original = tree.Tree._list

    def racing(self: tree.Tree, prefix: str, *rest: Any) -> object:
        if prefix == "lib/":
            (bundle / LIBRARY).unlink()
            (bundle / "lib").rmdir()
        return original(self, prefix, *rest)

    monkeypatch.setattr(tree.Tree, "_list", racing)


def test_a_directory_removed_during_the_walk(example_release: BuiltExample, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    _remove_lib_as_it_is_listed(bundle, monkeypatch)
    assert main(["verify", str(bundle)]) == 1
    err = capsys.readouterr().err
    assert "ERROR layout.changed:" in err and "Traceback" not in err


def _nest(root: Path, names: list[str]) -> list[str]:
    """Create root/names[0]/names[1]/… through directory descriptors (any total length)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"x")
        os.close(leaf)
    finally:
        os.close(fd)
    return names


def _unnest(root: Path, names: list[str]) -> None:
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    for name in names:
        fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
    os.unlink("leaf", dir_fd=fds[-1])
    for index in range(len(names) - 1, -1, -1):
        os.close(fds.pop())
        os.rmdir(names[index], dir_fd=fds[-1])
    os.close(fds.pop())


@pytest.mark.parametrize(("names", "message"), [
    (["d"] * 1100, "lies deeper than 32 directories"),
    (["n" * 250] * 20, "is longer than 512 bytes"),  # 5,020 bytes: past PATH_MAX (4,096)
])
def test_deep_and_long_trees_are_limits(example_release: BuiltExample, tmp_path: Path,
                                        names: list[str], message: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    _nest(bundle, names)
    try:
        start = time.monotonic()
        result = cli("verify", bundle)
        assert_refused(result, "layout.limit")
        assert message in result.stderr
        assert time.monotonic() - start < 30
    finally:
        _unnest(bundle, names)


def test_the_walk_is_iterative_even_without_directory_descriptors(
        example_release: BuiltExample, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The path-based walk (where the OS has no descriptor-relative calls) obeys the same
    limits; it is exercised here by switching the descriptor walk off."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    names = _nest(bundle, ["d"] * 40)
    try:
        monkeypatch.setattr(directory, "DIR_FDS", False)
        source = DirectorySource(bundle)
        assert [f.code.name for f in source.layout_findings] == ["layout.limit"]
        assert LIBRARY in source.files
        source.close()
    finally:
        _unnest(bundle, names)


def test_too_many_entries(example_release: BuiltExample, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    for index in range(30):
        (bundle / f"extra{index}").write_bytes(b"")
    monkeypatch.setattr(limits, "MAX_ENTRIES", 20)
    source = DirectorySource(bundle)
    assert "layout.limit" in [f.code.name for f in source.layout_findings]
    source.close()


DEEP = 50_000
NESTED_TOML = {
    "arrays": "schema = 1\nchannel = " + "[" * DEEP + "]" * DEEP + "\n",
    "inline tables": "schema = 1\nsigner = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
    "dotted keys": "schema = 1\n" + ".".join(["a"] * DEEP) + " = 1\n",
    "table headers": "schema = 1\n[" + ".".join(["a"] * DEEP) + "]\n",
    "arrays of tables": "schema = 1\n[[" + ".".join(["a"] * DEEP) + "]]\n",
    "quoted dotted keys": "schema = 1\n" + ".".join(['"a"'] * DEEP) + " = 1\n",
    "a header only 40 deep": "schema = 1\n[" + ".".join(["a"] * 40) + "]\n",
    "dotted keys only 40 deep": "schema = 1\n" + ".".join(["a"] * 40) + " = 1\n",
    "mixed": "schema = 1\nx = " + "[{a = " * (DEEP // 2) + "1" + "}]" * (DEEP // 2) + "\n",
    "nesting after a string with brackets": 'schema = 1\ns = "[[[[{{{{"\nx = '
                                            + "[" * DEEP + "]" * DEEP + "\n",
}


@pytest.mark.parametrize("case", sorted(NESTED_TOML))
def test_deep_toml_policy(example_release: BuiltExample, tmp_path: Path, case: str) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(NESTED_TOML[case])
    start = time.monotonic()
    result = cli("verify", example_release.archive, "--policy", policy)
    assert_refused(result, "policy.invalid", status=2)
    assert time.monotonic() - start < 20
    # refused for its depth (or its dots), before any key of it is judged
    assert "nest deeper than 32" in result.stderr or "dots outside strings" in result.stderr


def test_a_policy_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    from horon_bundle.core import codes  # noqa: PLC0415 - local to this check
    from horon_bundle.core.tomlread import read_toml  # noqa: PLC0415 - local to this check

    document = read_toml(("a = " + "[" * 31 + "]" * 31 + "\n").encode(), source="p",
                         code=codes.POLICY_INVALID)
    assert "a" in document


@pytest.mark.parametrize("value", ["1e300", "86401", "inf", "nan", "0", "-1"])
def test_absurd_timeouts_are_usage_errors(example_release: BuiltExample, value: str) -> None:
    result = cli("doctor", example_release.bundle, "--timeout", value)
    assert result.status == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "ERROR usage.invalid" in result.stderr and "--timeout" in result.stderr


# --- the walk and the file streams of a directory bundle, driven directly -------------------

BIG = "big.bin"


def _with_big_file(example_release: BuiltExample, tmp_path: Path) -> tuple[Path, bytes]:
    """A copy of the bundle holding a file of three chunks and a tail of varied bytes."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    data = hashlib.shake_256(b"horon").digest(3 * CHUNK + 1234)
    (bundle / BIG).write_bytes(data)
    return bundle, data


@pytest.mark.parametrize("descriptors", [True, False])
def test_a_stream_reads_the_size_asked_or_one_chunk(example_release: BuiltExample,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch, *,
                                                    descriptors: bool) -> None:
    """`read(n)` returns n bytes for 0 < n <= CHUNK and one whole chunk for any other n
    (never b"" before the end, which a caller would take for the end), then the tail, then
    b"" — through descriptors or (where the OS has none) by path."""
    bundle, data = _with_big_file(example_release, tmp_path)
    monkeypatch.setattr(directory, "DIR_FDS", descriptors)
    source = DirectorySource(bundle)
    try:
        with source.open(BIG) as stream:
            assert stream.read(10) == data[:10]
            assert stream.read(1) == data[10:11]
            position = 11
            for size in (0, -1, 2 * CHUNK):
                assert stream.read(size) == data[position:position + CHUNK], size
                position += CHUNK
            assert stream.read() == data[position:]
            assert stream.read() == b""
    finally:
        source.close()


@pytest.mark.parametrize("readv", [True, False])
def test_readinto_fills_the_buffer_it_is_given(example_release: BuiltExample, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, *,
                                               readv: bool) -> None:
    """At most len(buffer) and at most one chunk, the bytes of the file, with `readv` or
    (as on Windows) `read` and a copy into the buffer."""
    bundle, data = _with_big_file(example_release, tmp_path)
    monkeypatch.setattr(tree_stream, "_READV", readv)
    source = DirectorySource(bundle)
    try:
        with source.open(BIG) as stream:
            small = memoryview(bytearray(7))
            assert stream.readinto(small) == 7
            assert small.tobytes() == data[:7]
            large = memoryview(bytearray(CHUNK + 100))
            assert stream.readinto(large) == CHUNK
            assert large[:CHUNK].tobytes() == data[7:7 + CHUNK]
        with source.open(BIG) as stream:
            digest = hash_stream(stream)  # type: ignore[arg-type]
        assert (digest.sha256, digest.size) == (hashlib.sha256(data).hexdigest(), len(data))
    finally:
        source.close()


def test_a_stream_seeks_and_reads_from_there(example_release: BuiltExample,
                                             tmp_path: Path) -> None:
    """Sought back to 0, the whole file is read again (the judged size counts from there)."""
    bundle, data = _with_big_file(example_release, tmp_path)
    source = DirectorySource(bundle)
    try:
        with source.open(BIG) as stream:
            assert stream.seekable() is True
            stream.seek(len(data) - 5)
            assert stream.read() == data[-5:]
            assert stream.read() == b""
            stream.seek(100)
            assert stream.read(50) == data[100:150]
            stream.seek(0)
            digest = hash_stream(stream)  # type: ignore[arg-type]
        assert (digest.sha256, digest.size) == (hashlib.sha256(data).hexdigest(), len(data))
    finally:
        source.close()


@pytest.mark.parametrize("readv", [True, False])
def test_a_read_that_fails_is_layout_changed(example_release: BuiltExample, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, *,
                                             readv: bool) -> None:
    """An OSError from the descriptor (here EBADF: the stream was closed) is a refusal naming
    the file, from `read` and from `readinto`, never a traceback."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    monkeypatch.setattr(tree_stream, "_READV", readv)
    source = DirectorySource(bundle)
    stream = source.open("LICENSE")
    stream.close()
    source.close()
    reads: list[Callable[[], object]] = [stream.read,
                                         lambda: stream.readinto(memoryview(bytearray(16)))]
    for read in reads:
        with pytest.raises(Refused) as caught:
            read()
        assert caught.value.codes() == ["layout.changed"]
        message = caught.value.findings[0].message
        assert message.startswith(f"{bundle.name}: 'LICENSE': Bad file descriptor"), message
        assert message.endswith(" while it was read"), message


@pytest.mark.parametrize("descriptors", [True, False])
def test_closing_twice_closes_nothing_else(example_release: BuiltExample,
                                          monkeypatch: pytest.MonkeyPatch, *,
                                          descriptors: bool) -> None:
    """A stream and a source (walked by descriptors or by path) closed twice close only their
    own descriptors: standard output (descriptor 1) stays open."""
    monkeypatch.setattr(directory, "DIR_FDS", descriptors)
    before = os.fstat(1)
    saved = os.dup(1)
    try:
        source = DirectorySource(example_release.bundle)
        stream = source.open("LICENSE")
        stream.close()
        stream.close()
        source.close()
        source.close()
        after = os.fstat(1)  # OSError if it was closed
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


@pytest.mark.parametrize("holder", ["stream", "source"])
def test_a_descriptor_zero_is_closed(example_release: BuiltExample,
                                     monkeypatch: pytest.MonkeyPatch, holder: str) -> None:
    """Started with standard input closed, the verifier gets descriptor 0 for the first thing
    it opens: the bundle directory, or (walked by path, so that no directory descriptor is
    taken first) the first file; closing its holder closes it."""
    bundle = example_release.bundle
    monkeypatch.setattr(directory, "DIR_FDS", holder == "source")
    saved = os.dup(0)
    os.close(0)
    try:
        source = DirectorySource(bundle)
        if holder == "stream":
            stream = source.open("LICENSE")
            assert os.fstat(0).st_ino == (bundle / "LICENSE").stat().st_ino
            stream.close()
        else:
            assert os.fstat(0).st_ino == bundle.stat().st_ino
        source.close()
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(0)
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def test_the_bundle_path_swapped_for_a_link_after_its_lstat(example_release: BuiltExample,
                                                             tmp_path: Path) -> None:
    """open_bundle judged the path from its lstat; the source opens it again, never following
    a link the path became since (Linux says ENOTDIR for O_DIRECTORY | O_NOFOLLOW on a link
    to a directory, not ELOOP): layout.symlink, not an unreadable input."""
    link = tmp_path / "link"
    link.symlink_to(example_release.bundle, target_is_directory=True)
    with pytest.raises(Refused) as caught:
        DirectorySource(link)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("layout.symlink", f"{link}: the bundle path is a symbolic link")]


def test_the_bundle_path_became_a_file_or_nothing(example_release: BuiltExample,
                                                  tmp_path: Path) -> None:
    """A file (not followed as a directory) or nothing at the path: input.unreadable."""
    cases = {example_release.bundle / "LICENSE": "Not a directory",
             tmp_path / "absent": "No such file or directory"}
    for path, words in cases.items():
        with pytest.raises(Refused) as caught:
            DirectorySource(path)
        assert [(f.code.name, f.message) for f in caught.value.findings] == [
            ("input.unreadable", f"{path}: {words}")]


def test_the_bundle_mode_is_judged_on_the_directory_walked(example_release: BuiltExample,
                                                           tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The bundle directory is world-writable; a safe directory is renamed over its path
    right after it was opened: the mode judged is the one of the directory walked."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    bundle.chmod(0o777)
    real_open = os.open
    swapped: list[Path] = []

    def racing(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_open(path, flags, *args, **kwargs)
        if path == bundle and not swapped:
            swapped.append(bundle.rename(tmp_path / "walked"))
            bundle.mkdir()
            bundle.chmod(0o755)
        return fd

    monkeypatch.setattr(os, "open", racing)
    source = DirectorySource(bundle)
    monkeypatch.undo()
    source.close()
    assert swapped
    assert [(f.code.name, f.message) for f in source.layout_findings] == [
        ("layout.mode", f"{bundle.name}: directory '.' has mode 777")]
    assert LIBRARY in source.files


@pytest.mark.parametrize("descriptors", [True, False])
def test_layout_findings_come_in_name_order(example_release: BuiltExample, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch, *,
                                            descriptors: bool) -> None:
    """Entries are judged in the order of their names (not of their modes or inodes): a
    link named first is reported first, and is a link, walked by descriptor or by path."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    os.mkfifo(bundle / "b-pipe")
    (bundle / "a-link").symlink_to("LICENSE")
    monkeypatch.setattr(directory, "DIR_FDS", descriptors)
    source = DirectorySource(bundle)
    source.close()
    assert [(f.code.name, f.message) for f in source.layout_findings] == [
        ("layout.symlink", f"{bundle.name}: 'a-link' is a symbolic link"),
        ("layout.file-type", f"{bundle.name}: 'b-pipe' is a FIFO")]


def test_exactly_the_entry_limit_is_walked(example_release: BuiltExample, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    entries = sum(1 for _ in bundle.rglob("*"))
    monkeypatch.setattr(limits, "MAX_ENTRIES", entries)
    source = DirectorySource(bundle)
    source.close()
    assert not source.layout_findings
    assert LIBRARY in source.files
    monkeypatch.setattr(limits, "MAX_ENTRIES", entries - 1)
    source = DirectorySource(bundle)
    source.close()
    assert [(f.code.name, f.message) for f in source.layout_findings] == [
        ("layout.limit", f"{bundle.name}: more than {entries - 1} entries")]


def test_a_path_of_exactly_the_length_limit_is_walked(example_release: BuiltExample,
                                                      tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    parent = f"{'a' * 250}/{'b' * 250}"
    (bundle / parent).mkdir(parents=True)
    at_limit = f"{parent}/{'c' * (limits.MAX_NAME_BYTES - len(parent) - 1)}"
    assert len(at_limit.encode()) == limits.MAX_NAME_BYTES
    (bundle / at_limit).write_bytes(b"x")
    (bundle / (at_limit + "d")).write_bytes(b"y")
    (bundle / parent / "zz").write_bytes(b"z")  # after the over-long one: still judged
    source = DirectorySource(bundle)
    source.close()
    assert at_limit in source.files
    assert at_limit + "d" not in source.files
    assert f"{parent}/zz" in source.files
    assert [f.code.name for f in source.layout_findings] == ["layout.limit"]


def test_exactly_the_depth_limit_is_walked(example_release: BuiltExample,
                                          tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    deepest = "d/" * limits.MAX_DEPTH + "leaf"
    (bundle / deepest).parent.mkdir(parents=True)
    (bundle / deepest).write_bytes(b"x")
    too_deep = "e/" * limits.MAX_DEPTH + "e"
    (bundle / too_deep).mkdir(parents=True)
    (bundle / too_deep / "leaf").write_bytes(b"y")
    source = DirectorySource(bundle)
    source.close()
    assert deepest in source.files
    assert too_deep + "/leaf" not in source.files
    assert [(f.code.name, f.message) for f in source.layout_findings] == [
        ("layout.limit",
         f"{bundle.name}: {too_deep!r} lies deeper than {limits.MAX_DEPTH} directories")]


@pytest.mark.parametrize("descriptors", [True, False])
def test_a_directory_removed_during_the_walk_ends_only_its_listing(
        example_release: BuiltExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
        descriptors: bool) -> None:
    """`lib/` vanishes as it is listed: that is layout.changed naming it, and the walk goes on
    to the directories after it."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "zz").mkdir()
    (bundle / "zz" / "later").write_bytes(b"x")
    monkeypatch.setattr(directory, "DIR_FDS", descriptors)
    _remove_lib_as_it_is_listed(bundle, monkeypatch)
    source = DirectorySource(bundle)
    source.close()
    assert "zz/later" in source.files
    message = (f"{bundle.name}: 'lib' was removed while it was verified" if descriptors
               else f"{bundle.name}: 'lib/': No such file or directory")
    assert [(f.code.name, f.message) for f in source.layout_findings] == [
        ("layout.changed", message)]


@pytest.mark.parametrize("swap", ["a file", "a link to it", "a FIFO"])
def test_a_directory_swapped_between_walk_and_read(example_release: BuiltExample,
                                                   tmp_path: Path, swap: str) -> None:
    """`lib/` replaced after the walk — by a file, by a link to the very directory walked, by
    a FIFO (opened without O_DIRECTORY it would block) — is never entered."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    source = DirectorySource(bundle)
    lib = bundle / "lib"
    lib.rename(tmp_path / "lib.walked")
    if swap == "a file":
        lib.write_bytes(b"")
    elif swap == "a link to it":
        lib.symlink_to(tmp_path / "lib.walked", target_is_directory=True)
    else:
        os.mkfifo(lib)
    def expired(signum: int, frame: FrameType | None) -> None:
        pytest.fail("the verifier blocked")  # not an OSError, which the walk would report

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(5)
    try:
        with pytest.raises(Refused) as caught:
            source.open(LIBRARY).close()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        source.close()
    assert caught.value.codes() == ["layout.changed"]
    message = caught.value.findings[0].message
    assert message.startswith(f"{bundle.name}: {LIBRARY!r} stopped being a directory ("), message
    assert message.endswith(") while it was verified"), message


def _link_to_itself(path: Path) -> None:
    """The file judged, renamed, and a link to it under its name: same inode, same size."""
    moved = path.with_name(path.name + ".walked")
    path.rename(moved)
    path.symlink_to(moved.name)


FILE_SWAPS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "'LICENSE' became a FIFO"),
    "directory": (_directory, "'LICENSE' became a directory"),
    "hard link": (_hard_link, "'LICENSE' became a hard link (2 links)"),
    "world-writable": (_world_writable, "file 'LICENSE' has mode 666: changed"),
    "another inode": (_other_file, "'LICENSE' was replaced or resized"),
    "grown": (_grown, "'LICENSE' was replaced or resized"),
    "deleted": (Path.unlink, "'LICENSE' was removed"),
    "link to itself": (_link_to_itself,
                       "'LICENSE' could not be opened (Too many levels of symbolic links)"),
}


@pytest.mark.parametrize("descriptors", [True, False])
@pytest.mark.parametrize("swap", sorted(FILE_SWAPS))
def test_a_file_swapped_after_the_walk_is_named(example_release: BuiltExample,
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, *,
                                                swap: str, descriptors: bool) -> None:
    """Each change is refused when the file is opened, the message naming the bundle, the
    file and the change; a link to the very file judged is not followed either."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    monkeypatch.setattr(directory, "DIR_FDS", descriptors)
    source = DirectorySource(bundle)
    change, words = FILE_SWAPS[swap]
    change(bundle / "LICENSE")
    try:
        with pytest.raises(Refused) as caught:
            source.open("LICENSE").close()
    finally:
        source.close()
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("layout.changed", f"{bundle.name}: {words} while it was verified")]


def test_each_file_is_described_as_an_archive_entry_is(example_release: BuiltExample,
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Path, size and executable bit of each file, as the archive of the same bundle gives
    them; the executable bit is the owner's x bit, and unknown (None) where the file system
    keeps no POSIX modes."""
    source = DirectorySource(example_release.bundle)
    source.close()
    assert source.files == ArchiveSource(example_release.archive).files
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "lib" / "tool").write_bytes(b"#!/bin/sh\n")
    (bundle / "lib" / "tool").chmod(0o744)
    source = DirectorySource(bundle)
    source.close()
    expected = {path: BundleFile(path, (bundle / path).stat().st_size, path == "lib/tool")
                for path in _regular_files(bundle)}
    assert source.files == expected
    monkeypatch.setattr(tree, "POSIX_MODES", False)
    source = DirectorySource(bundle)
    source.close()
    assert {p: f.executable for p, f in source.files.items()} == dict.fromkeys(expected)


def _regular_files(bundle: Path) -> list[str]:
    return sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
