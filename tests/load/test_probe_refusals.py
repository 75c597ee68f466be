"""Refusals of the build's child-process probe, and doctor refusing to run where it cannot.

The build loads every library it can load here in a child process (`abi_probe`) before it
bundles it: a library that does not export the handshake, refuses a correct request, talks
on the child's answer channel or advertises metadata that is not ABI v1 / not the declared
plugin is refused, and nothing is written. The crates are the real cdylibs of
tests/fixtures/abi-faults (see tests/fixtures/README.md).

`doctor.environment` is the machine, not the bundle: a host whose target triple nobody can
name (an i686 personality without rustc), and a temporary directory that cannot take the
library (a file size limit, as a full disk or a quota would).

One guard: every registered code is named by some test module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from horon_bundle.core.errors import registered_codes
from tests.conftest import BuiltExample
from tests.gate_helpers import ABI_FAULTS, assert_refused_cleanly, build, error_lines
from tests.helpers import REPO, CliResult, assert_refused, tree_snapshot

pytestmark = pytest.mark.process


def test_every_registered_code_is_named_by_a_test() -> None:
    """A floor, not a proof: every code appears as a string literal in some test module
    (each should be asserted by a test that triggers it end to end)."""
    text = "\n".join(path.read_text(encoding="utf-8")
                     for path in sorted((REPO / "tests").rglob("*.py")))
    unnamed = [code.name for code in registered_codes()
               if f'"{code.name}"' not in text and f"'{code.name}'" not in text]
    assert unnamed == [], "registered codes no test names"


@pytest.mark.cargo
@pytest.mark.parametrize(("plugin", "code", "says"), [
    ("fault-no-symbol", "abi.load",
     "libfault_no_symbol.so: horon_agent_plugin_get_api_v1 is not exported"),
    ("fault-status", "abi.status",
     "libfault_status.so: a correct request was answered with status 6"),
    ("fault-garbage", "abi.garbage",
     "libfault_garbage.so: 2 lines on stdout where one JSON answer belongs"),
    ("fault-short", "abi.metadata", "libfault_short.so: struct_size 96 < 104"),
    ("fault-major", "abi.metadata", "the library advertises ABI major 2, bundles are ABI v1"),
    ("fault-plugin-id", "abi.metadata",
     "the library advertises plugin id 'example', declared 'fault-plugin-id'"),
])
def test_the_build_probe_refuses(tmp_path: Path, cargo_target_dir: Path, plugin: str,
                                 code: str, says: str) -> None:
    out = tmp_path / "out"
    temp = tmp_path / "tmp"
    temp.mkdir()
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", plugin,
                   env={"TMPDIR": str(temp)})
    assert_refused_cleanly(result, code, out)  # exit 1, no traceback, nothing in --out
    assert result.codes == [code]
    assert error_lines(result, code) == [f"ERROR {code}: {says}"]
    assert list(temp.iterdir()) == []  # the probe's child directory is gone too


def _cli_through(prefix: Sequence[str], *args: str | Path, env: dict[str, str]) -> CliResult:
    """`python -m horon_bundle ARGS` started through `prefix` (setarch, prlimit)."""
    # not measured by coverage (nox -s tests): under a file size limit it cannot save its data
    ours = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    full_env = {**ours, "COLUMNS": "200", "PYTHONDONTWRITEBYTECODE": "1", **env}
    done = subprocess.run([*prefix, sys.executable, "-m", "horon_bundle", *map(str, args)],
                          env=full_env, capture_output=True, text=True, timeout=120,
                          check=False)
    return CliResult(done.returncode, done.stdout, done.stderr)


def _usable(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode == 0
    except OSError:
        return False


def _doctor_environment(result: CliResult, bundle: Path, before: dict[str, str],
                        temp: Path) -> str:
    """Exit 3 with exactly doctor.environment, nothing changed, nothing left; the message."""
    assert_refused(result, "doctor.environment", status=3)
    assert result.codes == ["doctor.environment"]
    document = result.json()
    assert document["ok"] is False
    assert document["exit_status"] == 3
    [finding] = document["findings"]
    assert finding["code"] == "doctor.environment"
    assert tree_snapshot(bundle) == before
    assert list(temp.iterdir()) == []
    return str(finding["message"])


@pytest.mark.cargo
def test_doctor_on_a_host_nobody_can_name(example_release: BuiltExample,
                                          tmp_path: Path) -> None:
    setarch = shutil.which("setarch")
    if setarch is None or not _usable([setarch, "i686", sys.executable, "-c", "pass"]):
        pytest.skip("setarch i686 (util-linux) cannot run here")
    bundle = example_release.bundle
    before = tree_snapshot(bundle)
    temp = tmp_path / "tmp"
    temp.mkdir()
    empty = tmp_path / "bin"  # a PATH without rustc: the triple must come from the platform
    empty.mkdir()
    result = _cli_through([setarch, "i686"], "doctor", bundle, "--json",
                          env={"PATH": str(empty), "TMPDIR": str(temp)})
    message = _doctor_environment(result, bundle, before, temp)
    assert message == "cannot tell this host's target triple (linux) and rustc is not available"


@pytest.mark.cargo
def test_doctor_when_the_temporary_directory_cannot_take_the_library(
        example_release: BuiltExample, tmp_path: Path) -> None:
    prlimit = shutil.which("prlimit")
    if prlimit is None or not _usable([prlimit, "--fsize=65536", "--", sys.executable, "-c",
                                       "pass"]):
        pytest.skip("prlimit (util-linux) cannot run here")
    bundle = example_release.bundle
    library = next((bundle / "lib").iterdir())
    assert library.stat().st_size > 65536
    before = tree_snapshot(bundle)
    temp = tmp_path / "tmp"
    temp.mkdir()
    # Files above 64 KiB cannot be written (Python ignores SIGXFSZ: the write fails EFBIG).
    result = _cli_through([prlimit, "--fsize=65536", "--"], "doctor", bundle, "--json",
                          env={"TMPDIR": str(temp)})
    message = _doctor_environment(result, bundle, before, temp)
    assert message == "doctor's temporary directory: File too large"
