"""`python -m tests.host_doc`: docs/harness.md's table of "What the host checks, what we check,
and where we differ" rewritten from the differential table (tests/host_cases*.py);
tests/verify/test_host_differential.py keeps the two equal."""

from __future__ import annotations

from tests.helpers import REPO
from tests.host_cases_hooks import CASES
from tests.host_diff import render_table

BEGIN, END = "<!-- host-diff: begin -->\n", "<!-- host-diff: end -->\n"
DOC = REPO / "docs" / "harness.md"


def main() -> int:
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _old, tail = rest.split(END, 1)
    DOC.write_text(head + BEGIN + render_table(CASES) + END + tail)
    print(f"{DOC.relative_to(REPO)}: {len(CASES)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
