"""`nox -s mutants` judges mutants with in-process CLI runs (`tests.helpers.in_process`): they
must be what a user's run in a child process is, or a kill (or a survival) would mean nothing.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import BuiltExample
from tests.helpers import REPO, cli_process, in_process


@pytest.mark.slow
@pytest.mark.process
def test_in_process_run_is_the_child_process_run(example_release: BuiltExample,
                                                  tmp_path: Path) -> None:
    """Tests call the CLI in-process (`tests.helpers.cli`); a user runs a process. For a
    representative set of commands — a verdict, refusals of input and of usage, --json, a
    build refusal, a write into an agent home, listings and documentation — both give the
    same exit status, stdout and stderr."""
    home = tmp_path / "home"
    commands: list[tuple[str | Path, ...]] = [
        ("verify", example_release.archive),
        ("verify", example_release.bundle, "--json"),
        ("verify", tmp_path / "missing.zip"),
        ("verify", "--no-such-option"),
        ("inspect", example_release.archive, "--json"),
        ("build", tmp_path / "no-workspace"),
        ("codes",),
        ("docs",),
        ("profiles",),
        ("--version",),
        ("install", example_release.archive, "--home", home),
        ("list", "--home", home, "--json"),
        ("status", "--home", home),
        ("nonsense",),
    ]
    for args in commands:
        child = cli_process(*args)
        if args[0] == "install":  # each run installs into the same, empty home
            assert child.status == 0, child.stderr
            shutil.rmtree(home)
        here = in_process(*args)
        assert (here.status, here.stdout, here.stderr) == (
            child.status, child.stdout, child.stderr), args
    assert in_process("verify", tmp_path / "missing.zip").status == 1
    assert in_process("verify", "--no-such-option").status == 2


def test_in_process_run_restores_environment_and_directory(tmp_path: Path) -> None:
    before_env, before_cwd = dict(os.environ), Path.cwd()
    result = in_process("codes", cwd=tmp_path, env={"HORON_TEST_MARKER": "1"})
    assert result.status == 0 and "yank.reason" in result.stdout
    assert dict(os.environ) == before_env and Path.cwd() == before_cwd


def test_the_documented_mutants_options_and_the_plan_are_valid() -> None:
    from tests.mutants import results, run  # noqa: PLC0415 - the runner, not a test helper

    plan = results.load_plan(run.PLAN)
    assert plan.threshold >= 0.9
    for module, files in plan.judges.items():
        assert (REPO / "tooling" / "horon_bundle" / module).is_file(), module
        assert files and all((REPO / file).is_file() for file in files), module
    assert run._selected(plan, ["core/paths.py", "horon_bundle.core.inputs"]) == [
        m for m in plan.modules if m in ("core/paths.py", "core/inputs.py")]
    assert run._selected(plan, ["verify/*"]) == [
        m for m in plan.modules if m.startswith("verify/")]
    for group, modules in plan.groups.items():
        assert run._selected(plan, [group]) == list(modules)
        assert all(plan.group_of(module) == group for module in modules)
        assert set(plan.group_tests(group)) == {f for m in modules for f in plan.judges[m]}
    with pytest.raises(SystemExit):
        run._selected(plan, ["core/nothing.py"])
    results.load_reasons(run.SURVIVORS)  # well-formed, no reason twice


def test_a_module_in_two_groups_or_a_group_without_files_is_refused(tmp_path: Path) -> None:
    from tests.mutants import results  # noqa: PLC0415 - the runner, not a test helper

    twice = tmp_path / "twice.toml"
    twice.write_text('threshold = 0.9\n[groups.a]\n"core/paths.py" = ["t.py"]\n'
                     '[groups.b]\n"core/paths.py" = ["t.py"]\n', encoding="utf-8")
    with pytest.raises(SystemExit, match=re.escape("in [groups.a] and in [groups.b]")):
        results.load_plan(twice)
    empty = tmp_path / "empty.toml"
    empty.write_text('threshold = 0.9\n[groups.a]\n"core/paths.py" = []\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="no test file"):
        results.load_plan(empty)


def test_a_groups_whole_run_is_its_mutants_own_times_summed(tmp_path: Path) -> None:
    import json  # noqa: PLC0415

    from tests.mutants import results, stage  # noqa: PLC0415

    package = tmp_path / "mutants" / stage.PACKAGE
    (package / "core").mkdir(parents=True)
    (package / "core" / "a.py.meta").write_text(json.dumps(
        {"exit_code_by_key": {"m1": 1, "m2": 0, "m3": None},
         "durations_by_key": {"m1": 1.5, "m2": 2.25}}))
    (package / "core" / "b.py.meta").write_text(json.dumps({"exit_code_by_key": {}}))
    (tmp_path / "mutants" / "mutmut-stats.json").write_text(json.dumps({"stats_time": 10}))
    assert results.work_seconds(tmp_path, ["core/a.py", "core/b.py", "core/c.py"]) == 13.75
    (tmp_path / "mutants" / "mutmut-stats.json").unlink()
    assert results.work_seconds(tmp_path, ["core/a.py"]) == 3.75
