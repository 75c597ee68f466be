"""The frontmatter fields Claude Code (the pinned host, 2.1.332) types, as its validator judges
them: a value of another type is rejected by `claude plugin validate` and not loaded, or, for
`metadata`, dropped at load with a warning. Every other field is loaded as written.

- `name` (skills, commands, agents): a string (or empty);
- `description` (skills, commands, agents): a string, number or boolean (or empty), not a
  list or a mapping;
- `allowed-tools` (skills, commands, agents): a string or a list of strings (or empty);
- `shell` (skills, commands): `bash` or `powershell` (or empty);
- `metadata` (skills, commands): a mapping, else dropped at load (a warning).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_SHELLS = ("bash", "powershell")
_WITH_SHELL = ("skills", "commands")


@dataclass(frozen=True, slots=True)
class Judged:
    """The fields the host loads, and what it says of the others: `rejected` (its validator
    refuses the file) and `ignored` (dropped at load, a warning)."""

    values: dict[str, Any]
    rejected: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    dropped: tuple[str, ...] = field(default=())


def kind_of(value: object) -> str:
    """The JSON kind of a loaded value, as a message names it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping" if isinstance(value, dict) else "null"


def _problem(key: str, value: Any, kind: str) -> str | None:
    if value is None:
        return None
    if key == "name" and not isinstance(value, str):
        return f"name must be a string, got {kind_of(value)}"
    if key == "description" and isinstance(value, (list, dict)):
        return f"description must be a string, got {kind_of(value)}"
    if key == "allowed-tools":
        if isinstance(value, list):
            return None if all(isinstance(item, str) for item in value) else \
                "allowed-tools must list strings only"
        if not isinstance(value, str):
            return f"allowed-tools must be a string or a list of strings, got {kind_of(value)}"
    if key == "shell" and kind in _WITH_SHELL:
        if not isinstance(value, str):
            return f"shell must be a string, got {kind_of(value)}"
        if value not in _SHELLS:
            return f"shell must be bash or powershell, got {value!r}"
    return None


def judge_fields(values: dict[str, Any], kind: str) -> Judged:
    """`values` (a component's loaded frontmatter) of a component of `kind` (skills, commands,
    agents) as the host takes them: the fields it rejects or drops are left out."""
    kept: dict[str, Any] = {}
    rejected: list[str] = []
    ignored: list[str] = []
    dropped: list[str] = []
    for key, value in values.items():
        problem = _problem(key, value, kind)
        if problem is not None:
            rejected.append(problem)
            dropped.append(key)
        elif key == "metadata" and kind in _WITH_SHELL and not isinstance(value, dict) \
                and value is not None:
            ignored.append(f"metadata must be a mapping, got {kind_of(value)}: the host drops "
                           "it at load")
            dropped.append(key)
        else:
            kept[key] = value
    return Judged(kept, tuple(rejected), tuple(ignored), tuple(dropped))
