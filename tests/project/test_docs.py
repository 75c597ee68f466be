"""The docs stay true: every refusal code documented, README commands real, every limit
listed with its value, and no shipped text naming a document outside the repository."""

from __future__ import annotations

import ast
import importlib
import operator
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from horon_bundle.cli.cmd_codes import markdown
from horon_bundle.core.errors import registered_codes
from tests.helpers import REPO, cli


def test_refusal_code_page_is_generated_from_the_registry() -> None:
    page = (REPO / "docs" / "refusal-codes.md").read_text()
    assert page == markdown(), "run: horon-bundle codes --markdown > docs/refusal-codes.md"


def test_every_code_is_a_stable_dotted_name() -> None:
    for code in registered_codes():
        assert re.fullmatch(r"[a-z]+(\.[a-z0-9]+(-[a-z0-9]+)*)+", code.name), code.name
        assert code.summary.endswith(".") and code.hint


def test_readme_first_screen_gives_the_two_commands() -> None:
    first_screen = "\n".join((REPO / "README.md").read_text().splitlines()[:25])
    assert "nox -s bundle" in first_screen
    assert "nox -s tests" in first_screen
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("nox -s tests")


def test_codes_command_lists_json() -> None:
    result = cli("codes", "--json")
    assert result.status == 0
    names = [c["code"] for c in result.json()["codes"]]
    assert names == sorted(names) and "manifest.unknown-field" in names


# --- shipped text names nothing outside this repository --------------------------------------

# every file that ships (the package, its docs and templates) or that a user reads first
SHIPPED = ("tooling", "docs", "templates", "README.md", "CHANGELOG.md", "CONTRIBUTING.md",
           "noxfile.py", "pyproject.toml", "setup.py")
# a document the reader cannot open: a numbered seed or the seed's text, a specification or
# its sections, an issue by number or as "the issue", a working note or one of its rounds
OUTSIDE = re.compile(r"\b[Ss]eed [`'\"]?\d|\b[Ss]eed's\b|\bSPEC\b|§|\b[Ii]ssue #?\d+"
                     r"|\b(?:NOTES|FAULTS|STYLE)\.md\b|\b[Tt]he issue\b"
                     r"|\b(?:first|second|third|fourth|fifth) look\b|\bhelper_common\b")


def test_no_shipped_text_names_a_document_outside_the_repository() -> None:
    listed = subprocess.run(["git", "ls-files", "-z", *SHIPPED], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    found = []
    for name in filter(None, listed):
        try:
            text = (REPO / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # binary data, or a file deleted in the work tree
        found += [f"{name}:{number}: {line.strip()}"
                  for number, line in enumerate(text.splitlines(), start=1)
                  if OUTSIDE.search(line)]
    assert found == [], "say what is meant instead:\n" + "\n".join(found)


# --- docs/limits.md lists every limit with its value ------------------------------------------

PACKAGE = REPO / "tooling" / "horon_bundle"
LIMITS = REPO / "docs" / "limits.md"
LIMIT_NAME = re.compile(r"_?(?:MAX_[A-Z0-9_]+|[A-Z0-9_]*_MAX_[A-Z0-9_]*|[A-Z0-9_]*LIMIT[A-Z0-9_]*)")
MINUS = "\N{MINUS SIGN}"  # as the page writes it
UNITS = {None: 1, "byte": 1, "bytes": 1, "s": 1, "KiB": 1 << 10, "MiB": 1 << 20,
         "GiB": 1 << 30, "TiB": 1 << 40}
ROW = re.compile(r"\| `(?P<module>[\w/]+\.py)` \| `(?P<name>\w+)` \| (?P<value>[^|]+?) "
                 r"\| (?P<what>[^|]+?) \|")
OPERATORS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.LShift: operator.lshift, ast.Pow: operator.pow}


def _module(path: Path) -> str:
    return "horon_bundle." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def _assigned(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names += [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.value is not None:
            names.append(node.target.id)
    return names


def limit_constants() -> dict[tuple[str, str], float]:
    """(module path, name) -> value of every module-level limit constant of the package."""
    found: dict[tuple[str, str], float] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names = [name for name in _assigned(ast.parse(path.read_text(encoding="utf-8")))
                 if LIMIT_NAME.fullmatch(name)]
        module = importlib.import_module(_module(path)) if names else None
        for name in names:
            value = getattr(module, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[(path.relative_to(PACKAGE).as_posix(), name)] = value
    return found


def _literal(node: ast.expr) -> int | None:
    """The value of an integer written as a literal expression (`1 << 30`), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _literal(node.left), _literal(node.right)
        if left is not None and right is not None:
            return OPERATORS[type(node.op)](left, right)
    return None


def literal_caps() -> Counter[tuple[str, str, int]]:
    """(module path, argument, value) of every `max_…`/`…limit…` argument written as a number."""
    found: Counter[tuple[str, str, int]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if keyword.arg and (keyword.arg.startswith("max_") or "limit" in keyword.arg) \
                        and (value := _literal(keyword.value)) is not None:
                    found[(path.relative_to(PACKAGE).as_posix(), keyword.arg, value)] += 1
    return found


def amount(cell: str) -> int:
    """What a value cell says — `4 MiB`, `1,024`, `86,400 s (one day)`, or a difference such
    as 2 GiB minus 1 byte or 2^53 minus 1 (written with the minus sign) — in bytes, a count
    or seconds; a note in parentheses is not read."""
    terms = re.split(f" ([{MINUS}+]) ", cell.split(" (", maxsplit=1)[0])
    total, sign = 0, 1
    for index, term in enumerate(terms):
        if index % 2:
            sign = -1 if term == MINUS else 1
            continue
        number = re.fullmatch(r"(?:(?P<plain>\d{1,3}(?:,\d{3})*)|2\^(?P<power>\d+))"
                              r"(?: (?P<unit>\w+))?", term)
        assert number is not None and number["unit"] in UNITS, f"unreadable value {cell!r}"
        value = (int(number["plain"].replace(",", "")) if number["plain"]
                 else 2 ** int(number["power"]))
        total += sign * value * UNITS[number["unit"]]
    return total


def _rows(section: str) -> list[re.Match[str]]:
    page = LIMITS.read_text(encoding="utf-8")
    start = page.index(f"## {section}\n")
    end = page.find("\n## ", start + 1)
    return [row for line in page[start:end if end > 0 else None].splitlines()
            if (row := ROW.fullmatch(line))]


def test_the_limits_page_lists_every_limit_constant_with_its_value() -> None:
    documented: dict[tuple[str, str], int] = {}
    for row in _rows("Every limit constant"):
        key = (row["module"], row["name"])
        assert key not in documented, f"{key} listed twice"
        assert row["what"].strip(), key
        # a constant counted in MiB says so in its name; the page shows its size
        documented[key] = amount(row["value"]) >> (20 if row["name"].endswith("_MIB") else 0)
    actual = limit_constants()
    assert len(actual) > 50  # the walk found the package's limits
    unlisted, gone = sorted(set(actual) - set(documented)), sorted(set(documented) - set(actual))
    assert (unlisted, gone) == ([], []), "(limits not in docs/limits.md, rows with no limit)"
    wrong = {key: (documented[key], value) for key, value in actual.items()
             if documented[key] != value}
    assert wrong == {}, "(documented, actual) values differ"


def test_the_limits_page_lists_every_cap_written_at_the_call() -> None:
    documented = Counter((row["module"], row["name"], amount(row["value"]))
                         for row in _rows("Caps written at the call"))
    assert documented == literal_caps()


def test_the_limits_page_is_linked_from_architecture_and_threat_model() -> None:
    for page in ("architecture.md", "threat-model.md"):
        assert "(limits.md)" in (REPO / "docs" / page).read_text(encoding="utf-8"), page


# --- docs/architecture.md names what is there --------------------------------------------------

ARCHITECTURE = REPO / "docs" / "architecture.md"
# `verify/judge.py`, `verify/reading/`, `cli/main.py:COMMANDS`, `core/checkpoint.py: STEPS`
PATH_NAMED = re.compile(r"`((?:[\w.-]+/)+(?:[\w.-]+\.(?:py|toml|md))?)(?::\s?(\w+))?`")
# `NATIVE_CHECKS` in `verify/judge.py`
NAME_IN = re.compile(r"`(\w+)` in `((?:[\w-]+/)*[\w-]+\.py)`")


def _defined(path: Path) -> set[str]:
    names = set(_assigned(tree := ast.parse(path.read_text(encoding="utf-8"))))
    return names | {node.name for node in ast.walk(tree)
                    if isinstance(node, (ast.ClassDef, ast.FunctionDef))}


def _where(named: str) -> Path | None:
    for base in (PACKAGE, REPO, REPO / "tooling"):
        if (base / named).exists():
            return base / named
    return None


def test_every_module_and_name_architecture_md_points_at_exists() -> None:
    """Outside the table of renames, whose left column names what is gone."""
    text = ARCHITECTURE.read_text(encoding="utf-8").split("\n## Renamed modules and names\n")[0]
    wrong = []
    for named, name in PATH_NAMED.findall(text):
        if named.startswith("horon_bundle/") and named.endswith(("docs/", "templates/")):
            continue  # the wheel's copies, made by setup.py
        where = _where(named)
        if where is None:
            wrong.append(named)
        elif name and name not in _defined(where):
            wrong.append(f"{named}: {name}")
    for name, named in NAME_IN.findall(text):
        where = _where(named)
        if where is None or name not in _defined(where):
            wrong.append(f"{name} in {named}")
    assert wrong == []


def test_the_row_docs_architecture_shows_is_a_row_of_the_native_table() -> None:
    """docs/architecture.md teaches adding a check with a real row: it stays one."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    [shown] = re.findall(r"```python\n\s*(CheckRow\(.*\)),\n\s*```", text)
    source = (REPO / "tooling" / "horon_bundle" / "verify" / "judge.py").read_text(
        encoding="utf-8")
    assert f"    {shown},\n" in source
