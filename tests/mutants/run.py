"""`nox -s mutants` (`python -m tests.mutants.run [MODULE ...]`): mutate, test, report.

Runs mutmut over the modules of `plan.toml` (or the ones named: `core/paths.py`,
`horon_bundle.core.paths` or a glob such as `verify/*`), with the test files the plan names,
in build/mutants/ (stage.py). String literals and other message text are not mutated
(filters.py). After the run it reads mutmut's results, matches every surviving mutant with
its reviewed reason in `survivors.toml`, and writes the report: docs/mutants.md and the
kill-ratio block of docs/threat-model.md when the whole plan ran, build/mutants/report.md
otherwise. It fails when the kill ratio is under the plan's threshold, when a survivor has
no reason, or when a reason matches no survivor of the modules that ran.

`--resume` keeps the stage of an earlier run and re-tests only the mutants it did not kill
(after tests were added); the report of a resumed run is never written into docs/.
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

from tests.mutants import filters, report, results, stage

PLAN = Path(__file__).with_name("plan.toml")
SURVIVORS = Path(__file__).with_name("survivors.toml")


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nox -s mutants --", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE")
    parser.add_argument("--resume", action="store_true",
                        help="re-test the mutants an earlier run left alive")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)

    plan = results.load_plan(PLAN)
    modules = _selected(plan.modules, args.modules)
    tests = stage.test_files(plan.tests_of(modules))
    started = time.monotonic()
    stage.prepare(modules, tests, fresh=not args.resume)
    os.environ["HORON_TEST_PREBUILT_EXAMPLE"] = str(stage.build_example())
    os.environ["HORON_TEST_CLI"] = "in-process"
    names = results.unkilled(modules) if args.resume else []
    if args.resume and not names:
        print("nothing to re-test: every mutant of these modules was killed")
    else:
        _mutmut(names, args.max_children, {m: plan.judges[m] for m in modules})
    elapsed = time.monotonic() - started
    outcome = results.collect(modules, results.load_reasons(SURVIVORS))
    whole = modules == plan.modules and not args.resume
    text = report.markdown(outcome, plan=plan, tests=tests, seconds=elapsed, whole=whole)
    if whole:
        report.write_docs(text, outcome, plan, elapsed)
    else:
        (stage.STAGE / "report.md").write_text(text, encoding="utf-8")
    print(report.summary(outcome, plan, seconds=elapsed))
    return 0 if report.passed(outcome, plan) else 1


if __name__ == "__main__":
    sys.exit(main())
