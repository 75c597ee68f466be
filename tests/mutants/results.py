"""mutmut's results in build/mutants/<group>/, read back as modules, mutants and reviewed reasons.

A mutant is identified for review by where it is and what it changes: its module, its
function (`Class.method` for a method) and the lines the mutation removes and adds, each
whitespace-normalised. mutmut's own names (`x_parse__mutmut_17`) are numbered in generation
order and shift when a function changes; line numbers shift with any edit above. Neither is
used to match a reason, both are reported.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.mutants import stage

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the backport our package depends on there
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

# mutmut's statuses that mean a test detected the mutant: a failing test, a run over its
# time budget, a test process killed (mutmut reports a SIGKILL after the wall-clock limit as
# "segfault")
KILLED = frozenset({"killed", "timeout", "segfault"})
# statuses that leave a mutant alive: each needs a reviewed reason
ALIVE = frozenset({"survived", "no tests", "suspicious"})


@dataclass(frozen=True, slots=True)
class Plan:
    threshold: float
    groups: dict[str, dict[str, list[str]]]  # group -> module -> the test files judging it

    @property
    def judges(self) -> dict[str, list[str]]:
        """module -> the test files its mutants are run against, over every group."""
        return {module: files for group in self.groups.values()
                for module, files in group.items()}

    @property
    def modules(self) -> list[str]:
        return list(self.judges)

    def group_of(self, module: str) -> str:
        return next(name for name, group in self.groups.items() if module in group)

    def tests_of(self, modules: list[str]) -> list[str]:
        """The test files judging `modules`, once each, in the plan's order."""
        return list(dict.fromkeys(t for m in modules for t in self.judges[m]))

    def group_tests(self, group: str) -> list[str]:
        """Every test file of one group's run: mutmut's test selection in its stage."""
        return self.tests_of(list(self.groups[group]))


@dataclass(frozen=True, slots=True)
class Reason:
    module: str
    function: str
    original: str
    mutated: str
    reason: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.module, self.function, normal(self.original), normal(self.mutated))


@dataclass(frozen=True, slots=True)
class Mutant:
    name: str  # mutmut's name
    module: str  # relative to tooling/horon_bundle
    function: str
    status: str
    line: int  # where the change is, in the source file (0: not found)
    original: str
    mutated: str
    reason: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.module, self.function, normal(self.original), normal(self.mutated))


@dataclass(slots=True)
class ModuleResult:
    module: str
    mutants: list[Mutant] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)  # test files credited by mutmut's stats

    def count(self, statuses: frozenset[str]) -> int:
        return sum(m.status in statuses for m in self.mutants)

    @property
    def killed(self) -> int:
        return self.count(KILLED)

    @property
    def alive(self) -> list[Mutant]:
        return [m for m in self.mutants if m.status in ALIVE]

    @property
    def tested(self) -> int:
        return self.count(KILLED | ALIVE)


@dataclass(slots=True)
class Outcome:
    modules: list[ModuleResult]  # every mutant of each has a result
    stale: list[Reason]  # reasons of these modules that matched no surviving mutant
    incomplete: list[ModuleResult] = field(default_factory=list)  # some mutants untested

    @property
    def total(self) -> int:
        return sum(len(m.mutants) for m in self.modules)

    @property
    def killed(self) -> int:
        return sum(m.killed for m in self.modules)

    @property
    def ratio(self) -> float:
        return self.killed / self.total if self.total else 0.0

    @property
    def alive(self) -> list[Mutant]:
        return [mutant for module in self.modules for mutant in module.alive]

    @property
    def unchecked(self) -> list[Mutant]:
        return [mutant for module in self.modules for mutant in module.mutants
                if mutant.status not in KILLED | ALIVE]


def normal(text: str) -> str:
    return " ".join(text.split())


def load_plan(path: Path) -> Plan:
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    groups = {name: {module: list(files) for module, files in group.items()}
              for name, group in data["groups"].items()}
    seen: dict[str, str] = {}
    for name, group in groups.items():
        if not group:
            raise SystemExit(f"{path.name}: [groups.{name}] names no module")
        for module, files in group.items():
            if not files:
                raise SystemExit(f"{path.name}: [groups.{name}] gives no test file for {module}")
            if module in seen:
                raise SystemExit(f"{path.name}: {module} is in [groups.{seen[module]}] and in "
                                 f"[groups.{name}]")
            seen[module] = name
    return Plan(threshold=float(data["threshold"]), groups=groups)


def load_reasons(path: Path) -> list[Reason]:
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    reasons = [Reason(module=item["module"], function=item["function"],
                      original=item["original"], mutated=item["mutated"],
                      reason=item["reason"]) for item in data.get("survivor", [])]
    seen: set[tuple[str, str, str, str]] = set()
    for reason in reasons:
        if not reason.reason.strip():
            raise SystemExit(f"{path.name}: {reason.module} {reason.function}: empty reason")
        if reason.key in seen:
            raise SystemExit(f"{path.name}: {reason.module} {reason.function}: "
                             f"{reason.original!r} -> {reason.mutated!r} is listed twice")
        seen.add(reason.key)
    return reasons


@contextlib.contextmanager
def _in_stage(where: Path) -> Iterator[None]:
    """mutmut's result readers take paths relative to the directory it ran in."""
    before = Path.cwd()
    os.chdir(where)
    try:
        yield
    finally:
        os.chdir(before)


def _meta(where: Path, module: str) -> dict[str, int | None]:
    path = _meta_path(where, module)
    if not path.is_file():
        raise SystemExit(f"no mutmut results for {module} in {path.parent}: run it first")
    codes: dict[str, int | None] = json.loads(path.read_text(encoding="utf-8"))[
        "exit_code_by_key"]
    return codes


def work_seconds(where: Path, modules: list[str]) -> float:
    """What one run of a group's stage costs in mutant time: each tested mutant's own measured
    duration (mutmut's `durations_by_key`), summed, plus the stats pass (`stats_time`). A run
    with N children takes about this divided by N."""
    total = 0.0
    for module in modules:
        path = _meta_path(where, module)
        if path.is_file():
            meta = json.loads(path.read_text(encoding="utf-8"))
            total += sum(meta.get("durations_by_key", {}).values())
    stats = where / "mutants" / "mutmut-stats.json"
    if stats.is_file():
        total += float(json.loads(stats.read_text(encoding="utf-8")).get("stats_time") or 0)
    return total


def _status(code: int | None) -> str:
    from mutmut.stats import status_by_exit_code  # noqa: PLC0415

    status: str = status_by_exit_code[code]
    return status


def _meta_path(where: Path, module: str) -> Path:
    return where / "mutants" / stage.PACKAGE / f"{module}.meta"


def untested(where: Path, modules: list[str]) -> list[str]:
    """mutmut names (or a glob, for a module mutmut has not mutated yet) of the mutants of
    `modules` (of the group staged in `where`) that no run has tested: what a batch run of
    those modules tests."""
    names: list[str] = []
    for module in modules:
        if not _meta_path(where, module).is_file():
            names.append(f"horon_bundle.{module.removesuffix('.py').replace('/', '.')}.*")
        else:
            names += [name for name, code in _meta(where, module).items() if code is None]
    return names


def _spans(source: str) -> dict[str, tuple[int, int]]:
    """`function` or `Class.method` -> its first and last line."""
    spans: dict[str, tuple[int, int]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            spans[node.name] = (node.lineno, node.end_lineno or node.lineno)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    spans[f"{node.name}.{item.name}"] = (item.lineno,
                                                         item.end_lineno or item.lineno)
    return spans


def _change(diff: str) -> tuple[str, str]:
    """(removed lines, added lines) of a unified diff, each stripped and joined by newlines."""
    removed, added = [], []
    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith("-"):
            removed.append(line[1:].strip())
        elif line.startswith("+"):
            added.append(line[1:].strip())
    return "\n".join(removed), "\n".join(added)


def _line(lines: list[str], span: tuple[int, int] | None, original: str) -> int:
    first = original.split("\n", 1)[0]
    if span is None or not first:
        return span[0] if span else 0
    for number in range(span[0], span[1] + 1):
        if lines[number - 1].strip() == first:
            return number
    return span[0]


CREDITED = "credited.json"  # in the stage: the tests each function's mutants ran against


def module_of(mangled: str) -> str:
    """`horon_bundle.core.paths.x_parse` -> `core/paths.py`."""
    from mutmut.utils.format_utils import get_module_from_key  # noqa: PLC0415

    return get_module_from_key(mangled).removeprefix("horon_bundle.").replace(".", "/") + ".py"


def narrowed(tests_by_function: dict[str, set[str]],
             judges: dict[str, list[str]]) -> dict[str, set[str]]:
    """The tests of each function kept to the test files its module's judges are (the stats
    run ran them all, so a function is credited with every test file that called it)."""
    result: dict[str, set[str]] = {}
    for name, tests in tests_by_function.items():
        files = judges.get(module_of(name), [])
        result[name] = {t for t in tests if t.split("::", 1)[0] in files}
    return result


def _credited_tests(where: Path) -> dict[str, set[str]]:
    """mangled function name (`horon_bundle.core.paths.x_parse`) -> test files that call it."""
    credited = json.loads((where / CREDITED).read_text(encoding="utf-8"))
    return {name: {test.split("::", 1)[0] for test in tests}
            for name, tests in credited.items()}


def collect(plan: Plan, modules: list[str], reasons: list[Reason]) -> Outcome:
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # noqa: PLC0415
    from mutmut.utils.format_utils import (  # noqa: PLC0415
        mangled_name_from_mutant_name,
        orig_function_and_class_names_from_key,
    )

    by_key = {reason.key: reason for reason in reasons}
    used: set[tuple[str, str, str, str]] = set()
    outcome = Outcome(modules=[], stale=[])
    for module in modules:
        where = stage.path(plan.group_of(module))
        credited = _credited_tests(where)
        with _in_stage(where):
            path = Path(stage.PACKAGE) / module
            source = (stage.REPO / "tooling" / "horon_bundle" / module).read_text(
                encoding="utf-8")
            lines, spans = source.splitlines(), _spans(source)
            result = ModuleResult(module=module)
            files: set[str] = set()
            for name, code in sorted(_meta(where, module).items()):
                files |= credited.get(mangled_name_from_mutant_name(name), set())
                function, klass = orig_function_and_class_names_from_key(name)
                qualified = f"{klass}.{function}" if klass else function
                status = _status(code)
                original = mutated = ""
                if status in ALIVE:
                    original, mutated = _change(get_diff_for_mutant(name, path=path))
                mutant = Mutant(name=name, module=module, function=qualified, status=status,
                                line=_line(lines, spans.get(qualified), original)
                                if status in ALIVE else 0,
                                original=original, mutated=mutated)
                if status in ALIVE and (found := by_key.get(mutant.key)) is not None:
                    used.add(found.key)
                    mutant = dataclasses.replace(mutant, reason=found.reason)
                result.mutants.append(mutant)
            result.tests = sorted(files)
            outcome.modules.append(result)
    outcome.stale = [r for r in reasons if r.module in modules and r.key not in used]
    return outcome


def split_complete(outcome: Outcome) -> Outcome:
    """The modules every mutant of which has a result, and apart those a stopped run left with
    untested mutants (what `nox -s mutants -- GROUP` continues): only complete modules are
    judged against the threshold, and only their reasons can be stale."""
    complete = [m for m in outcome.modules if m.tested == len(m.mutants)]
    done = {m.module for m in complete}
    return Outcome(modules=complete, stale=[r for r in outcome.stale if r.module in done],
                   incomplete=[m for m in outcome.modules if m.module not in done])
