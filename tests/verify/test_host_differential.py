"""The host's verdict is the floor: every case of the differential table (tests/host_cases*.py)
and the real public plugins of tests/build/test_harness_real.py are put to the pinned Claude
Code (`claude plugin validate --json`, its marketplace, or `--plugin-dir`) and to `build` and
`verify --host claude-code@<pinned>` in-process; the table must say what each says, and ours
must hold the floor (tests/host_diff.py). docs/harness.md's table is the table's rendering."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.build.test_harness_real import PACKAGES, _package
from tests.claude_host import CLAUDE_CODE_VERSION, ClaudeHost
from tests.helpers import REPO
from tests.host_cases_hooks import CASES
from tests.host_diff import (
    HOST_TOKEN,
    STRICTER,
    VERDICTS_HOST,
    VERDICTS_OURS,
    Case,
    floor_problems,
    host_verdict,
    our_verdict,
    render_table,
    write_case,
)
from tests.host_doc import BEGIN, END
from tests.host_profile import profile_events, shipped_profile


def test_the_table_is_well_formed() -> None:
    for case in CASES:
        assert case.host in VERDICTS_HOST and case.ours in VERDICTS_OURS, case.name
        assert case.why in ("", *STRICTER), case.name
        differs = (case.ours == "refuses" and case.host != "rejects") or \
            (case.ours == "warns" and case.host == "accepts") or \
            (case.ours == "passes" and case.host == "warns")
        assert bool(case.why) == differs, f"{case.name}: a difference names its class"
        assert case.host == "accepts" or case.says or case.judged != "validate", case.name


def test_docs_show_the_table() -> None:
    text = (REPO / "docs" / "harness.md").read_text()
    assert BEGIN in text and END in text
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert shown == render_table(CASES), "regenerate: python -m tests.host_doc"


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_host_and_we_hold_the_floor(case: Case, tmp_path: Path,
                                        claude_host: ClaudeHost) -> None:
    root = write_case(tmp_path / case.plugin, case.files)
    with ThreadPoolExecutor(1) as pool:  # the host's process runs while ours runs here
        asked = pool.submit(host_verdict, claude_host, root, judged=case.judged,
                            name=case.plugin, home=tmp_path / "home")
        ours = our_verdict(root, tmp_path / "out")
        theirs = asked.result()
    said = " | ".join(theirs.messages)
    assert theirs.verdict == case.host, (
        f"claude {CLAUDE_CODE_VERSION} {theirs.verdict} it, the table says {case.host}: {said}")
    assert case.says in said, said
    assert ours.verdict == case.ours, (ours, case)
    assert case.code is None or case.code in ours.messages, (ours, case.code)
    assert floor_problems(theirs, ours, case.why) == []


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("spec", [*PACKAGES, "claude-dev-environment-setup@1.4.0/plugin"])
def test_real_public_plugins_hold_the_floor(spec: str, tmp_path: Path,
                                            claude_host: ClaudeHost) -> None:
    package = _package(spec.removesuffix("/plugin"), tmp_path)
    if spec.endswith("/plugin"):
        package = package / "plugins" / "dev-environment-setup"
    theirs = host_verdict(claude_host, package, judged="validate", name=package.name,
                          home=tmp_path / "home")
    ours = our_verdict(package, tmp_path / "out")
    assert floor_problems(theirs, ours) == [], (theirs, ours)  # --strict: our warnings too


@pytest.mark.process
@pytest.mark.slow
def test_the_profile_fires_the_events_of_the_pinned_host() -> None:
    """The profile's fired events are the HOOK_EVENTS of the pinned CLI (`nox -s
    host-profile` rewrites them when the pin moves)."""
    profile = shipped_profile()
    assert profile["version"] == CLAUDE_CODE_VERSION and HOST_TOKEN.endswith(profile["version"])
    events = profile_events()
    assert profile["events"]["fired"] == events
    assert all(re.fullmatch(r"[A-Z][A-Za-z]+", event) for event in events)
