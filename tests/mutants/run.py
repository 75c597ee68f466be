"""`nox -s mutants` (`python -m tests.mutants.run [MODULE ...]`): mutate, test, report.

Without arguments: a fresh run of every module of `plan.toml`, in build/mutants/ (stage.py),
each mutant judged by the tests of its module's files that call its function. String literals
and other message text are not mutated (filters.py). After the run it reads mutmut's results,
matches every surviving mutant with its reviewed reason in `survivors.toml`, and writes the
report: docs/mutants.md and the kill-ratio block of docs/threat-model.md. It fails when the
kill ratio is under the plan's threshold, when a survivor has no reason, or when a reason
matches no survivor.

The stage is kept between runs, and mutmut's results in it stay valid (every module is
mutated and every judge file selected in each run), so a run can be split:

- `MODULE ...` (`core/paths.py`, `horon_bundle.core.paths`, a glob such as `verify/*`) tests
  the mutants of those modules that no run has tested yet;
- `--resume [MODULE ...]` re-tests the mutants an earlier run left alive (after tests were
  added);
- `--report` runs nothing and reports what the stage holds.

The report goes to docs/ when the stage holds results for every module of the plan, with the
number of runs and their total time; otherwise to build/mutants/report.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.mutants import report, results, stage

PLAN = Path(__file__).with_name("plan.toml")
SURVIVORS = Path(__file__).with_name("survivors.toml")
RUNS = "runs.json"  # in the stage: the runs whose results it holds, since the last fresh one


def _selected(planned: list[str], asked: Sequence[str]) -> list[str]:
    if not asked:
        return planned
    chosen: list[str] = []
    for word in asked:
        pattern = word.removeprefix("horon_bundle.").replace(".", "/") \
            if not word.endswith(".py") and "/" not in word else word
        pattern = pattern if pattern.endswith((".py", "*")) else pattern + ".py"
        matched = [module for module in planned if fnmatch.fnmatch(module, pattern)]
        if not matched:
            raise SystemExit(f"{word!r} names no module of tests/mutants/plan.toml")
        chosen += [module for module in matched if module not in chosen]
    return chosen


def _judge_after_stats(judges: dict[str, list[str]]) -> None:
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
        (stage.STAGE / results.CREDITED).write_text(json.dumps(
            {name: sorted(found) for name, found in sorted(kept.items())}, indent=1),
            encoding="utf-8")

    mutmut_main.collect_or_load_stats = collect_then_judge


def _mutmut(names: list[str], max_children: int, judges: dict[str, list[str]]) -> None:
    """Run mutmut in the stage, in this process (its filters installed first)."""
    from tests.mutants import filters  # noqa: PLC0415 - libcst: only `nox -s mutants` has it

    os.chdir(stage.STAGE)  # mutmut reads its configuration from there when first imported
    filters.install()
    _judge_after_stats(judges)
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


def _unexplained(modules: list[str]) -> list[str]:
    """mutmut names of the mutants of `modules` an earlier run left alive (or never tested)
    and that have no reviewed reason: what a resumed run re-tests."""
    outcome = results.collect(modules, results.load_reasons(SURVIVORS))
    return [m.name for m in [*outcome.alive, *outcome.unchecked] if not m.reason]


def _record_run(modules: list[str], *, fresh: bool, resume: bool,
                planned: list[str]) -> None:
    """Log this run as started (a fresh run starts a new log); `_finish_run` adds its time."""
    runs: list[dict[str, Any]] = [] if fresh else _runs(planned)
    runs.append({"modules": modules, "seconds": None, "started": time.time(), "fresh": fresh,
                 "resume": resume})
    (stage.STAGE / RUNS).write_text(json.dumps(runs, indent=1), encoding="utf-8")


def _finish_run(seconds: float) -> None:
    runs = json.loads((stage.STAGE / RUNS).read_text(encoding="utf-8"))
    runs[-1]["seconds"] = round(seconds, 1)
    (stage.STAGE / RUNS).write_text(json.dumps(runs, indent=1), encoding="utf-8")


def _runs(modules: list[str]) -> list[dict[str, Any]]:
    """The stage's log of runs. A fresh run stopped before its end (killed) left none: it is
    then taken from the stage's own times, from its configuration (written when the run
    started) to the last result mutmut wrote, and marked as stopped."""
    path = stage.STAGE / RUNS
    metas = list((stage.STAGE / "mutants").rglob("*.py.meta"))
    ended = max((meta.stat().st_mtime for meta in metas), default=time.time())
    if path.is_file():
        runs: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        for run in runs:  # stopped before its end: its time runs to the last result written
            if run["seconds"] is None:
                run["seconds"], run["stopped"] = round(ended - run["started"], 1), True
        return runs
    if not metas:
        raise SystemExit(f"no run in {stage.STAGE}: run `nox -s mutants` first")
    started = (stage.STAGE / "pyproject.toml").stat().st_mtime
    runs = [{"modules": modules, "seconds": round(ended - started, 1), "fresh": True,
             "stopped": True}]
    path.write_text(json.dumps(runs, indent=1), encoding="utf-8")
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s mutants --", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE")
    parser.add_argument("--resume", action="store_true",
                        help="re-test the mutants an earlier run left alive")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: write the report of the stage's runs")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)

    plan = results.load_plan(PLAN)
    modules = _selected(plan.modules, args.modules)
    # every module is mutated and every judge file is in mutmut's test selection whatever is
    # run, so mutmut's cached results of one run stay valid for the next (a batch of modules,
    # a resumed run): it resets them all when its test selection changes
    fresh = not (args.modules or args.resume or args.report)
    if not args.report:
        if not fresh:
            _runs(plan.modules)  # a stopped run's times are read before this one touches them
        started = time.monotonic()
        stage.prepare(plan.modules, stage.test_files(plan.tests), fresh=fresh)
        _record_run(modules, fresh=fresh, resume=args.resume, planned=plan.modules)
        os.environ["HORON_TEST_PREBUILT_EXAMPLE"] = str(stage.build_example())
        os.environ["HORON_TEST_CARGO_TARGET_DIR"] = str(stage.STAGE / "target")
        os.environ["HORON_TEST_CLI"] = "in-process"
        names = [] if fresh else _unexplained(modules) if args.resume \
            else results.untested(modules)
        if not fresh and not names:
            print("nothing to test: every mutant of these modules has a result"
                  + (" and was killed" if args.resume else " (--resume re-tests survivors)"))
        else:
            _mutmut(names, args.max_children, plan.judges)
        _finish_run(time.monotonic() - started)
    runs = _runs(plan.modules)
    done = {module for run in runs for module in run["modules"]}
    shown = plan.modules if args.report else modules
    missing = [module for module in shown if module not in done]
    if missing:
        raise SystemExit(f"no run of {missing} in {stage.STAGE}: run them first")
    outcome = results.collect(shown, results.load_reasons(SURVIVORS))
    seconds = sum(run["seconds"] for run in runs)
    whole = shown == plan.modules
    text = report.markdown(outcome, plan=plan, tests=plan.tests_of(shown), seconds=seconds,
                           runs=runs, whole=whole)
    if whole:
        report.write_docs(text, outcome, plan, seconds, runs=len(runs))
    else:
        (stage.STAGE / "report.md").write_text(text, encoding="utf-8")
    print(report.summary(outcome, plan, seconds=seconds, runs=len(runs)))
    return 0 if report.passed(outcome, plan) else 1


if __name__ == "__main__":
    sys.exit(main())
