"""`nox -s mutants` (`python -m tests.mutants.run [WORD ...]`): mutate, test, report.

Without arguments: a fresh run of every group of `plan.toml`, one after the other, each in its
own stage (build/mutants/<group>/, stage.py) and its own process, each mutant judged by the
tests of its module's files that call its function. String literals and other message text
are not mutated (filters.py). After the run it reads mutmut's results, matches every
surviving mutant with its reviewed reason in `survivors.toml`, and writes the report:
docs/mutants.md and the kill-ratio block of docs/threat-model.md. It fails when the kill ratio
is under the plan's threshold, when a survivor has no reason, or when a reason matches no
survivor.

A group's stage is kept between runs, and mutmut's results in it stay valid (every module of
the group is mutated and every judge file of the group selected in each of its runs), so a
run can be split. A WORD is a module (`core/paths.py`, `horon_bundle.core.paths`), a glob
(`verify/*`) or a group's name (every module of the group):

- `WORD ...` tests the mutants of those modules that no run has tested yet;
- `--fresh WORD ...` discards the stages of the groups of those modules and runs them anew;
- `--resume [WORD ...]` re-tests the mutants an earlier run left alive (after tests were
  added);
- `--report` runs nothing and reports what the stages hold.

The report goes to docs/ when the stages hold results for every module of the plan, with the
runs and their times; otherwise to build/mutants/report.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.mutants import report, results, stage

PLAN = Path(__file__).with_name("plan.toml")
SURVIVORS = Path(__file__).with_name("survivors.toml")
RUNS = "runs.json"  # in the stage: the runs whose results it holds, since the last fresh one


def _selected(plan: results.Plan, asked: Sequence[str]) -> list[str]:
    planned = plan.modules
    if not asked:
        return planned
    chosen: list[str] = []
    for word in asked:
        if word in plan.groups:
            matched = list(plan.groups[word])
        else:
            pattern = word.removeprefix("horon_bundle.").replace(".", "/") \
                if not word.endswith(".py") and "/" not in word else word
            pattern = pattern if pattern.endswith((".py", "*")) else pattern + ".py"
            matched = [module for module in planned if fnmatch.fnmatch(module, pattern)]
        if not matched:
            raise SystemExit(f"{word!r} names no module or group of tests/mutants/plan.toml")
        chosen += [module for module in matched if module not in chosen]
    return [module for module in planned if module in chosen]  # in the plan's order


def _judge_after_stats(where: Path, judges: dict[str, list[str]]) -> None:
    """After mutmut has collected (or loaded) its stats, keep the tests of each function to
    its module's judges, and record the tests each function's mutants will run against."""
    import mutmut.__main__ as mutmut_main  # noqa: PLC0415 - only `nox -s mutants` has mutmut
    from mutmut.state import state  # noqa: PLC0415

    collect = mutmut_main.collect_or_load_stats

    def collect_then_judge(*args: Any, **kwargs: Any) -> None:
        collect(*args, **kwargs)
        tests = state().tests_by_mangled_function_name
        kept = results.narrowed({name: set(found) for name, found in tests.items()}, judges)
        for name, found in kept.items():
            tests[name] = found
        (where / results.CREDITED).write_text(json.dumps(
            {name: sorted(found) for name, found in sorted(kept.items())}, indent=1),
            encoding="utf-8")

    mutmut_main.collect_or_load_stats = collect_then_judge


def _mutmut(where: Path, names: list[str], max_children: int,
            judges: dict[str, list[str]]) -> None:
    """Run mutmut in one group's stage, in this process (its filters installed first)."""
    from tests.mutants import filters  # noqa: PLC0415 - libcst: only `nox -s mutants` has it

    os.chdir(where)  # mutmut reads its configuration from there when first imported
    filters.install()
    _judge_after_stats(where, judges)
    # pytest must import the stage's copy of `tests` and mutmut's copy of `horon_bundle`,
    # not the modules this runner was started from
    for name in [n for n in sys.modules if n.split(".")[0] in ("tests", "horon_bundle")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != stage.REPO]
    from mutmut.__main__ import _run  # noqa: PLC0415 - only `nox -s mutants` has mutmut

    try:
        _run(names, max_children)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise


NAMES = "names.json"  # in a stage: the mutants its group's process is asked to test


def _run_group(where: Path, names: list[str], max_children: int) -> None:
    """One group's mutmut run, in a process of its own: mutmut's state is per process."""
    (where / NAMES).write_text(json.dumps(names), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "tests.mutants.run", "--in-stage", where.name,
                    "--max-children", str(max_children)], cwd=stage.REPO, check=True)


def _unexplained(plan: results.Plan, modules: list[str]) -> list[str]:
    """mutmut names of the mutants of `modules` an earlier run left alive and that have no
    reviewed reason: what a resumed run re-tests (the untested ones are a `WORD` run's)."""
    outcome = results.collect(plan, modules, results.load_reasons(SURVIVORS))
    return [m.name for m in outcome.alive if not m.reason]


def _record_run(where: Path, modules: list[str], *, fresh: bool, resume: bool,
                children: int) -> None:
    """Log this run as started (a fresh run starts a new log); `_finish_run` adds its time."""
    runs: list[dict[str, Any]] = [] if fresh else _runs(where, modules)
    runs.append({"group": where.name, "modules": modules, "seconds": None,
                 "started": time.time(), "fresh": fresh, "resume": resume,
                 "children": children})
    (where / RUNS).write_text(json.dumps(runs, indent=1), encoding="utf-8")


def _finish_run(where: Path, seconds: float) -> None:
    runs = json.loads((where / RUNS).read_text(encoding="utf-8"))
    runs[-1]["seconds"] = round(seconds, 1)
    (where / RUNS).write_text(json.dumps(runs, indent=1), encoding="utf-8")


def _runs(where: Path, modules: list[str]) -> list[dict[str, Any]]:
    """One stage's log of runs. A run stopped before its end (killed) has no time: it is taken
    from the stage's own times, from the run's start to the last result mutmut wrote, and
    marked as stopped."""
    path = where / RUNS
    metas = list((where / "mutants").rglob("*.py.meta"))
    ended = max((meta.stat().st_mtime for meta in metas), default=time.time())
    if not path.is_file():
        if not metas:
            return []
        started = (where / "pyproject.toml").stat().st_mtime
        stopped: list[dict[str, Any]] = [{"group": where.name, "modules": modules, "seconds":
                                          round(ended - started, 1), "fresh": True,
                                          "stopped": True}]
        path.write_text(json.dumps(stopped, indent=1), encoding="utf-8")
        return stopped
    runs: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    for run in runs:  # stopped before its end: its time runs to the last result written
        if run["seconds"] is None:
            run["seconds"], run["stopped"] = round(max(ended - run["started"], 0), 1), True
    return runs


def _in_stage_main(group: str, max_children: int) -> int:
    plan = results.load_plan(PLAN)
    where = stage.path(group)
    names = json.loads((where / NAMES).read_text(encoding="utf-8"))
    _mutmut(where, names, max_children, plan.judges)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s mutants --", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("words", nargs="*", metavar="WORD")
    parser.add_argument("--fresh", action="store_true",
                        help="discard the stages of these modules' groups and run them anew")
    parser.add_argument("--resume", action="store_true",
                        help="re-test the mutants an earlier run left alive")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: write the report of the stages' runs")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--in-stage", metavar="GROUP", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.in_stage:
        return _in_stage_main(args.in_stage, args.max_children)

    plan = results.load_plan(PLAN)
    modules = _selected(plan, args.words)
    fresh = args.fresh or not (args.words or args.resume or args.report)
    if not args.report:
        os.environ["HORON_TEST_PREBUILT_EXAMPLE"] = str(stage.build_example())
        os.environ["HORON_TEST_CARGO_TARGET_DIR"] = str(stage.TARGET)
        os.environ["HORON_TEST_CLI"] = "in-process"
        groups = list(dict.fromkeys(plan.group_of(module) for module in modules))
        for group in groups:
            chosen = [module for module in modules if module in plan.groups[group]]
            where = stage.path(group)
            if not fresh:
                _runs(where, list(plan.groups[group]))  # a stopped run's time, read first
            started = time.monotonic()
            stage.prepare(group, list(plan.groups[group]), plan.group_tests(group),
                          fresh=fresh)
            _record_run(where, list(plan.groups[group]) if fresh else chosen, fresh=fresh,
                        resume=args.resume, children=args.max_children)
            # a whole group, not resumed: no names, so that mutmut tests every mutant without a
            # result once it has regenerated the functions that changed since its last run
            every = fresh or (not args.resume and chosen == list(plan.groups[group]))
            names = [] if every else _unexplained(plan, chosen) if args.resume \
                else results.untested(where, chosen)
            if not every and not names:
                print(f"{group}: nothing to test: every mutant of these modules has a result"
                      + (" and was killed" if args.resume else " (--resume re-tests them)"))
            else:
                _run_group(where, names, args.max_children)
            _finish_run(where, time.monotonic() - started)
    runs = [run for group in plan.groups
            for run in _runs(stage.path(group), list(plan.groups[group]))]
    done = {module for run in runs for module in run["modules"]}
    shown = plan.modules if args.report else modules
    missing = [module for module in shown if module not in done]
    if missing:
        raise SystemExit(f"no run of {missing} in {stage.ROOT}: run them first")
    outcome = results.split_complete(results.collect(plan, shown,
                                                     results.load_reasons(SURVIVORS)))
    seconds = sum(run["seconds"] for run in runs)
    whole = shown == plan.modules
    text = report.markdown(outcome, plan=plan, tests=plan.tests_of(shown), seconds=seconds,
                           runs=runs, whole=whole)
    if whole:
        report.write_docs(text, outcome, plan, seconds, runs=runs)
    else:
        (stage.ROOT / "report.md").write_text(text, encoding="utf-8")
    print(report.summary(outcome, plan, seconds=seconds, runs=len(runs)))
    return 0 if report.passed(outcome, plan) else 1


if __name__ == "__main__":
    sys.exit(main())
