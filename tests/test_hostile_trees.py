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

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest

from horon_bundle.cli.main import main
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_stream
from horon_bundle.verify import directory, limits
from horon_bundle.verify.directory import DirectorySource
from tests.conftest import BuiltExample
from tests.helpers import assert_refused, cli, copy_bundle, tree_snapshot

LIBRARY = "lib/libhoron_example.so"


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail (rather than hang) if the test takes more than 60 s."""
    def expired(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("the verifier blocked")

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


def test_a_directory_removed_during_the_walk(example_release: BuiltExample, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    original = DirectorySource._list

    def racing(self: DirectorySource, prefix: str) -> object:
        if prefix == "lib/":
            (bundle / LIBRARY).unlink()
            (bundle / "lib").rmdir()
        return original(self, prefix)

    monkeypatch.setattr(DirectorySource, "_list", racing)
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
