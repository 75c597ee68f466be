"""The publish gate: two repository variables, read from the environment, decide everything.

Publishing happens only when `HORON_PUBLISH_ENABLED` is exactly `true` and
`HORON_PUBLISH_DESTINATION` is non-empty. GitHub expands an undefined `vars.X` to the empty
string, so an empty value counts as not set. When the gate is closed nothing else runs: no
file is read, no destination contacted, nothing written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding
from horon_bundle.core.fields import describe_value

ENABLED_VARIABLE = "HORON_PUBLISH_ENABLED"
DESTINATION_VARIABLE = "HORON_PUBLISH_DESTINATION"
ENABLED_VALUE = "true"


@dataclass(frozen=True, slots=True)
class Gate:
    """The decision: `destination` is set only when the gate is open."""

    destination: str | None
    problems: tuple[str, ...]
    # a switch set to something other than exactly `true`: skipped, and said so loudly
    warnings: tuple[Finding, ...] = ()

    @property
    def open(self) -> bool:
        return not self.problems

    def skip_line(self, what: str = "publish") -> str:
        """The one line a closed gate prints (names every missing variable)."""
        return f"{what} skipped: " + "; ".join(self.problems)


def read_gate(environ: Mapping[str, str]) -> Gate:
    problems = []
    warnings: list[Finding] = []
    enabled = environ.get(ENABLED_VARIABLE, "")
    if enabled == "":
        problems.append(f"{ENABLED_VARIABLE} is not set")
    elif enabled != ENABLED_VALUE:
        problem = (f"{ENABLED_VARIABLE} is {describe_value(enabled)}, not exactly "
                   f"{ENABLED_VALUE!r}")
        problems.append(problem)
        warnings.append(Finding(codes.PUBLISH_SWITCH_VALUE,
                                f"{problem}: nothing is published"))
    destination = environ.get(DESTINATION_VARIABLE, "")
    if destination == "":
        problems.append(f"{DESTINATION_VARIABLE} is not set")
    if problems:
        return Gate(destination=None, problems=tuple(problems), warnings=tuple(warnings))
    return Gate(destination=destination, problems=())
