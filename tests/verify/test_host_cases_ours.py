"""Our side of every case of the differential table, in-process and without the host: `build`
and `verify --host claude-code@<pinned>` say what the table says (the pinned host's side is
asked in test_host_differential.py). Fast enough to judge mutants of the harness readers
(tests/mutants/plan.toml, the harness group)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.host_cases_hooks import CASES
from tests.host_diff import Case, our_verdict, write_case


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_our_verdict_is_the_tables(case: Case, tmp_path: Path) -> None:
    ours = our_verdict(write_case(tmp_path / case.plugin, case.files), tmp_path / "out")
    assert ours.verdict == case.ours, ours
    assert case.code is None or case.code in ours.messages, ours
