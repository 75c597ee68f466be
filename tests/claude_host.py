"""The real Claude Code CLI, pinned, for the tests that ask the host itself.

`CLAUDE_CODE_VERSION` is the one pin (docs/harness.md and docs/publishing.md name it). The CLI
is taken from the npm registry once and kept outside the repository
(`$HORON_TEST_CLAUDE_CACHE/<version>`, default `~/.cache/horon-bundle-tests/claude-code/`),
as `npm install -g --prefix` lays it out (`bin/claude`): `npm pack` fetches the wrapper
package, its sha512 integrity must be the one pinned here, and it is installed from that
verified tarball; its postinstall links the platform package's native binary into place. The
install is then checked against both pinned tarballs, file by file (the platform package's
binary is the `bin/claude.exe` that runs), and a stamp records the binary's identity so the
check runs once. An install found without a stamp (made by hand) is checked the same way and
never replaced.

Without npm, or when the registry cannot be reached, the tests that need the CLI **fail**,
saying so: CI installs npm (.ci/run, the ci workflow), and a skipped host test would prove
nothing. The CLI runs with a private HOME, an environment of its own (no variable of the
test's environment but PATH) and a timeout.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

CLAUDE_CODE_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
# `npm view <package>@2.1.332 dist.integrity`, for the wrapper and each platform's binary
INTEGRITY = {
    PACKAGE: "sha512-tvSh6bLvEbd97APD31AnojOrRC3AmcRj5R8sF8QIQitu3x2ucOb1kKmTkGDw41kjva+CGJfpk"
             "t+wYouk6yv56Q==",
    f"{PACKAGE}-linux-x64": "sha512-f4JWhzwYutJIHScC7/dYOPX6s28tt7ZADhsOi8zwOHq5fFPEuUeChh2NMf"
                            "inSg0GrUckYxaeebC4h0DqiKzLcw==",
    f"{PACKAGE}-linux-arm64": "sha512-BlHNEtK38KBPWU31F4lUSS9sHclCyfWbThT1CErvxxH8+XcljYLZlQw"
                              "dyXBkTD62rw1TgfE1u1a+quMWS0NSJg==",
    f"{PACKAGE}-linux-x64-musl": "sha512-QoQzwipnqRAdBKDAJNJ2Qvl37G6x8nCugfOQa+nuMcGIRgGEOLeWo"
                                 "q3pTLMQRScL37estAQBGH9ygR3WFVbIfw==",
    f"{PACKAGE}-linux-arm64-musl": "sha512-jdjkkJLfAQ9M1HbT05tZHQpGNZUEPUebYwW/xpiMypZddB0lNlH"
                                   "lB9mXfOVV/UUPO0JCghj1NSQjxhhJc4L4CA==",
    f"{PACKAGE}-darwin-x64": "sha512-i0GV2ejBOeHMXs+XPCd1IaJj1GV3VdZl8hiQD6hLMR/N7f4Nt8q4Edj1GY"
                             "JCKXPLJa/zsE9Uv6r9rZ/ldVFQPQ==",
    f"{PACKAGE}-darwin-arm64": "sha512-L/F5mypyB7SK59cesiAqGv1bVNd+8xTn0LF5kV6EGL6UMhofVJMFlokh"
                               "DRoxNzANNC5i/5JdzfJyDOKUbZObiA==",
}
# what every run gets: no update check, no telemetry, no traffic that is not the command's
HOST_ENVIRONMENT = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_TELEMETRY": "1", "NO_COLOR": "1", "LANG": "C.UTF-8"}
STAMP = "horon-verified.json"
NPM_TIMEOUT = 900
CHUNK = 1 << 20


def cache_root() -> Path:
    configured = os.environ.get("HORON_TEST_CLAUDE_CACHE")
    return (Path(configured) if configured
            else Path.home() / ".cache" / "horon-bundle-tests" / "claude-code")


@dataclass(frozen=True, slots=True)
class Ran:
    status: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


@dataclass(frozen=True, slots=True)
class ClaudeHost:
    """The pinned CLI. `run` starts it once: `prefix` (e.g. nsenter into a test's namespace)
    before it, HOME and the variables above, `env` on top."""

    executable: Path

    def run(self, *args: str | Path, home: Path, env: Mapping[str, str] | None = None,
            prefix: Sequence[str] = (), timeout: float = 120) -> Ran:
        home.mkdir(parents=True, exist_ok=True)
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                       **HOST_ENVIRONMENT, **(env or {})}
        done = subprocess.run([*prefix, str(self.executable), *map(str, args)], cwd=home,
                              env=environment, capture_output=True, text=True,
                              timeout=timeout, check=False)
        return Ran(done.returncode, done.stdout, done.stderr)


def _fail(message: str) -> None:
    pytest.fail(f"the pinned Claude Code CLI ({PACKAGE}@{CLAUDE_CODE_VERSION}): {message}",
                pytrace=False)


def _npm(*args: str, cwd: Path) -> str:
    npm = shutil.which("npm")
    if npm is None:
        _fail("npm is not installed; the host tests need it to fetch the CLI once "
              "(apt-get install npm, or .ci/run)")
    assert npm is not None
    done = subprocess.run([npm, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=NPM_TIMEOUT, check=False)
    if done.returncode != 0:
        _fail(f"`npm {' '.join(args)}` failed (is the npm registry reachable?): "
              f"{done.stderr.strip()[-800:]}")
    return done.stdout


def _pack(spec: str, into: Path) -> Path:
    """`npm pack SPEC` into `into`; the tarball, its integrity checked against the pin."""
    [packed] = json.loads(_npm("pack", spec, "--json", "--pack-destination", str(into),
                               cwd=into))
    tarball = into / str(packed["filename"])
    name = spec.rsplit("@", 1)[0]
    digest = hashlib.sha512()
    with tarball.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    integrity = "sha512-" + base64.b64encode(digest.digest()).decode()
    if integrity != INTEGRITY[name]:
        _fail(f"{spec} from npm has integrity {integrity}, not the pinned {INTEGRITY[name]}")
    return tarball


def _sha256(stream: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return _sha256(stream)


def _tarball_files(tarball: Path) -> dict[str, str]:
    """Path inside the package -> sha256, for every file of an npm tarball."""
    files = {}
    with tarfile.open(tarball) as archive:
        for member in archive:
            stream = archive.extractfile(member) if member.isfile() else None
            if stream is not None:
                files[member.name.removeprefix("package/")] = _sha256(stream)
    return files


def _installed(prefix: Path) -> tuple[Path, str]:
    """The installed wrapper package's directory and its one platform package's name."""
    wrapper = prefix / "lib" / "node_modules" / PACKAGE
    found = sorted(p.name for p in (wrapper / "node_modules" / "@anthropic-ai").glob(
        "claude-code-*")) if wrapper.is_dir() else []
    if len(found) != 1:
        _fail(f"{wrapper}: expected one platform package beside it, found {found}")
    platform = f"@anthropic-ai/{found[0]}"
    if platform not in INTEGRITY:
        _fail(f"{platform} has no pinned integrity: add `npm view {platform}@"
              f"{CLAUDE_CODE_VERSION} dist.integrity` to tests/claude_host.py")
    return wrapper, platform


def _verify(prefix: Path, work: Path) -> None:
    """Compare the install with the pinned tarballs; then stamp it."""
    wrapper, platform = _installed(prefix)
    binary = wrapper / "bin" / "claude.exe"
    expected = _tarball_files(_pack(f"{PACKAGE}@{CLAUDE_CODE_VERSION}", work))
    native = _tarball_files(_pack(f"{platform}@{CLAUDE_CODE_VERSION}", work))
    if "claude" not in native:
        _fail(f"{platform} holds no `claude` binary")
    expected["bin/claude.exe"] = native["claude"]  # the postinstall puts the binary there
    for where, files in ((wrapper, expected), (wrapper / "node_modules" / platform, native)):
        for relative, sha256 in files.items():
            path = where / relative
            if not path.is_file() or _file_sha256(path) != sha256:
                _fail(f"{path} is not the file of the pinned package; remove {prefix} and "
                      "run again")
    info = binary.stat()
    stamp = {"version": CLAUDE_CODE_VERSION, "platform": platform, "sha256": native["claude"],
             "identity": [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns]}
    (prefix / STAMP).write_text(json.dumps(stamp, sort_keys=True) + "\n")


def _stamped(prefix: Path) -> bool:
    try:
        stamp = json.loads((prefix / STAMP).read_text())
        binary = prefix / "lib" / "node_modules" / PACKAGE / "bin" / "claude.exe"
        info = binary.stat()
    except (OSError, ValueError):
        return False
    return bool(stamp.get("version") == CLAUDE_CODE_VERSION and stamp.get("identity") == [
        info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns])


def _install(prefix: Path, work: Path) -> None:
    """npm install -g --prefix, from the verified wrapper tarball, then renamed into place."""
    tarball = _pack(f"{PACKAGE}@{CLAUDE_CODE_VERSION}", work)
    staging = work / "prefix"
    _npm("install", "--global", "--prefix", str(staging), "--no-audit", "--no-fund",
         str(tarball), cwd=work)
    staging.rename(prefix)


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One installer at a time (pytest-xdist workers share the cache)."""
    import fcntl  # noqa: PLC0415 - POSIX only, as the host tests are

    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def pinned_claude() -> ClaudeHost:
    """The pinned CLI, installed and checked once; the test fails when it cannot be had."""
    root = cache_root()
    prefix = root / CLAUDE_CODE_VERSION
    with _locked(root):
        if not _stamped(prefix):
            with tempfile.TemporaryDirectory(prefix=".work-", dir=root) as work:
                if not prefix.exists():
                    _install(prefix, Path(work))
                _verify(prefix, Path(work))
    return ClaudeHost(prefix / "bin" / "claude")
