"""Shared test helpers: run the real CLI, snapshot trees, edit bundles consistently."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "templates" / "plugin"
FIXTURES = REPO / "tests" / "fixtures"
HOST = "x86_64-unknown-linux-gnu"
# Seconds after which a refusal that takes well under a second on an idle machine counts as a
# hang or a blow-up (the inputs it bounds took minutes, or forever, before): generous, so that
# a loaded machine under coverage never fails it. Speed itself is measured by `nox -s bench`.
HANG_GUARD = 30.0
# What a deadline test allows beyond the deadline it checks, for the same reason.
LATE = 3.0


@dataclass(frozen=True)
class CliResult:
    status: int
    stdout: str
    stderr: str

    @property
    def codes(self) -> list[str]:
        """Refusal codes the CLI printed (`ERROR <code>: …` lines on stderr)."""
        found = []
        for line in self.stderr.splitlines():
            if line.startswith("ERROR "):
                found.append(line.split()[1].rstrip(":"))
        return found

    @property
    def warnings(self) -> list[str]:
        """Warning codes the CLI printed (`WARNING <code>: …` lines on stderr)."""
        return [line.split()[1].rstrip(":") for line in self.stderr.splitlines()
                if line.startswith("WARNING ")]

    def json(self) -> Any:
        return json.loads(self.stdout)


# the test hooks that stop or kill the process reaching a step (HORON_INSTALL_PAUSE_AT waits
# only with its marker file named): a CLI call setting one runs in a child, never in the test
PROCESS_HOOKS = (("HORON_TEST_CHECKPOINT",),
                 ("HORON_INSTALL_PAUSE_AT", "HORON_INSTALL_PAUSE_FILE"))
# set by tests/conftest.py for each test: whether it carries the `process` marker
PROCESS_ALLOWED = {"now": True}


def cli(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 600, prefix: Sequence[str | Path] = ()) -> CliResult:
    """Run `horon-bundle ARGS` as a user would: in this process (`in_process`: `main(argv)`
    with its own stdout, stderr, environment and working directory), which is what every
    test that is not about the process gets.

    A real child process (`cli_process`) when the process itself is under test: a `prefix`
    (e.g. `unshare -rn`), a test hook in `env` that pauses or kills the process reaching it,
    or `HORON_TEST_CLI=process` (every call a child, to compare the two)."""
    if prefix or os.environ.get("HORON_TEST_CLI") == "process" \
            or any(all(name in (env or {}) for name in hook) for hook in PROCESS_HOOKS):
        return cli_process(*args, cwd=cwd, env=env, timeout=timeout, prefix=prefix)
    return in_process(*args, cwd=cwd, env=env)


def cli_process(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
                timeout: float = 600, prefix: Sequence[str | Path] = ()) -> CliResult:
    """Run `python -m horon_bundle ARGS` in a child process (started through `prefix` when
    given). Only tests marked `process` may: a child costs about 0.16 s, 0.3 s under coverage,
    where the same call in-process costs milliseconds."""
    assert PROCESS_ALLOWED["now"], (
        "a CLI child process in a test without @pytest.mark.process: call `cli` (in-process), "
        "or mark the test when the process is what it tests")
    full_env = dict(os.environ)
    full_env.setdefault("COLUMNS", "200")
    full_env.pop("SOURCE_DATE_EPOCH", None)
    full_env.pop("HORON_TEST_CLI", None)
    if env:
        full_env.update(env)
    done = subprocess.run([*map(str, prefix), sys.executable, "-m", "horon_bundle",
                           *map(str, args)], cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    return CliResult(done.returncode, done.stdout, done.stderr)


def in_process(*args: str | Path, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> CliResult:
    """Run `horon_bundle.cli.main.main(ARGS)` in this process, as `cli_process` runs it in a
    child: the environment with `env` on top (SOURCE_DATE_EPOCH removed), in `cwd`, stdout and
    stderr captured, a `SystemExit` (usage errors, --help) taken as the exit status. The
    environment and the working directory are restored afterwards."""
    from horon_bundle.cli.main import main  # noqa: PLC0415 - the tree under test, at call time

    saved_env, saved_cwd, saved_temp = dict(os.environ), Path.cwd(), tempfile.tempdir
    out, err = io.StringIO(), io.StringIO()
    os.environ.setdefault("COLUMNS", "200")
    os.environ.pop("SOURCE_DATE_EPOCH", None)
    os.environ.update(env or {})
    tempfile.tempdir = None  # found again from this environment's TMPDIR, as a child would
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(arg) for arg in args])
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        tempfile.tempdir = saved_temp
    return CliResult(status, out.getvalue(), err.getvalue())


@dataclass(frozen=True)
class Measured(CliResult):
    seconds: float
    peak_rss_mib: float


# The CLI's own entry, then the peak RSS of this process image (VmHWM: counted from exec, not
# the forking test's pages, which getrusage's ru_maxrss of a child includes).
_PEAK_REPORTING = (
    "import os, runpy\n"
    "try:\n"
    "    runpy.run_module('horon_bundle', run_name='__main__')\n"
    "finally:\n"
    "    with open('/proc/self/status') as status:\n"
    "        peak = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    with open(os.environ['HORON_TEST_PEAK_FILE'], 'w') as out:\n"
    "        out.write(peak)\n")


def cli_measured(*args: str | Path, env: dict[str, str] | None = None,
                 timeout: float = 120) -> Measured:
    """`horon-bundle ARGS` as a child (tests marked `process` only), with its wall time and
    its own peak RSS; killed after `timeout` seconds."""
    assert PROCESS_ALLOWED["now"], "a measured child only in a test marked process"
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch) / "peak"
        full_env = {**os.environ, "COLUMNS": "200", **(env or {}),
                    "HORON_TEST_PEAK_FILE": str(peak_file)}
        full_env.pop("HORON_TEST_CLI", None)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", _PEAK_REPORTING, *map(str, args)],
                              env=full_env, capture_output=True, text=True, timeout=timeout,
                              check=False)
        seconds = time.monotonic() - started
        return Measured(done.returncode, done.stdout, done.stderr, seconds,
                        int(peak_file.read_text()) / 1024)


def assert_refused(result: CliResult, code: str, *, status: int = 1) -> None:
    assert result.status == status, (result.status, result.stderr)
    assert code in result.codes, (code, result.codes, result.stderr)
    assert "Traceback" not in result.stderr


# a file this large is known by its identity and times, not hashed: a write changes its ctime
# (and hashing a 2 GiB sparse file twice per test cost half a minute)
_HASHED_UP_TO = 64 << 20


def tree_snapshot(root: Path) -> dict[str, str]:
    """Relative path -> sha256 (or a marker for directories/links, or the identity and times
    of a file over 64 MiB) of everything under root."""
    snapshot: dict[str, str] = {}
    if not root.exists():
        return snapshot
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            snapshot[relative] = "link:" + str(path.readlink())
        elif path.is_dir():
            snapshot[relative] = "dir"
        elif not path.is_file():
            snapshot[relative] = "special"
        elif (info := path.stat()).st_size > _HASHED_UP_TO:
            snapshot[relative] = (f"large:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:"
                                  f"{info.st_ctime_ns}")
        else:
            snapshot[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return snapshot


def copy_bundle(bundle: Path, destination: Path) -> Path:
    target = destination / bundle.name
    shutil.copytree(bundle, target, symlinks=True)
    return target


def rewrite_listing(bundle: Path, path: str) -> None:
    """Make SHA256SUMS agree with the current bytes of `path` (so only the targeted rule fails)."""
    sums = bundle / "SHA256SUMS"
    digest = hashlib.sha256((bundle / path).read_bytes()).hexdigest()
    lines = []
    for line in sums.read_text().splitlines():
        name = line.split("  ", 1)[1]
        lines.append(f"{digest}  {name}" if name == path else line)
    sums.write_text("".join(line + "\n" for line in lines))


def write_manifest_bytes(bundle: Path, data: bytes) -> None:
    (bundle / "plugin.json").write_bytes(data)
    rewrite_listing(bundle, "plugin.json")


def edit_manifest(bundle: Path, change: Any) -> None:
    """Load plugin.json, let `change(document)` edit it, write it back canonically."""
    document = json.loads((bundle / "plugin.json").read_text())
    change(document)
    write_manifest_bytes(bundle, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())


def copy_workspace(source: Path, destination: Path) -> Path:
    """Copy a cargo workspace without build output."""
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("target", ".git"))
    return destination


def content_digest(content: Any) -> str:
    """A byproduct's digest: sha256 of the canonical bytes of its content."""
    text = json.dumps(content, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
    return hashlib.sha256(text.encode()).hexdigest()


def edit_provenance(bundle: Path, change: Any, *, rebind_byproducts: bool = True) -> None:
    """Edit provenance.json and re-bind it (each byproduct's digest, the plugin.json asset
    digest, SHA256SUMS) consistently, so only the provenance's own checks can fail."""
    path = bundle / "provenance.json"
    document = json.loads(path.read_text())
    change(document)
    byproducts = document.get("predicate", {}).get("runDetails", {}).get("byproducts", [])
    for item in byproducts if rebind_byproducts and isinstance(byproducts, list) else []:
        if isinstance(item, dict) and isinstance(item.get("digest"), dict) \
                and "annotations" in item:
            item["digest"]["sha256"] = content_digest(item["annotations"])
    data = (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()
    path.write_bytes(data)
    rewrite_listing(bundle, "provenance.json")

    def rebind(manifest: dict[str, Any]) -> None:
        for asset in manifest["assets"]:
            if asset["path"] == "provenance.json":
                asset["sha256"] = hashlib.sha256(data).hexdigest()
                asset["size"] = len(data)
    edit_manifest(bundle, rebind)


def byproduct(statement: dict[str, Any], name: str) -> dict[str, Any]:
    for item in statement["predicate"]["runDetails"]["byproducts"]:
        if item["name"] == name:
            return item  # type: ignore[no-any-return]
    raise KeyError(name)
