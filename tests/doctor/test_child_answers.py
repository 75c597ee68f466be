"""Hostile answers: the child's answer and progress record are decoded as untrusted data.

The starting point is real: the transcript of the real doctor child run on the real
`fault-none` library (and the real probe answer). Hypothesis then rewrites it the way a
library inside the child could — any field deleted, replaced by any JSON value, added; the
progress record changed the same way or left alone; arbitrary documents and lines — and
every one must be decoded and judged without any exception but a `Refused`, and never to a
forged verdict: while the progress record is the real one, a report that passes means the
answer says exactly what the real one said.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from horon_bundle.core.errors import Refused
from horon_bundle.doctor.handshake import Row, expect_rows, refusal_rows
from horon_bundle.doctor.phases import judge_phases
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.doctor.run import FRAME_LIMIT, INSPECT_LIMIT, phase_results
from horon_bundle.load.answers import Expect
from horon_bundle.load.probe import advertised_from
from horon_bundle.load.runner import ChildOutcome, private_directory, run_child
from horon_bundle.load.transcript import read_answer
from horon_bundle.model.manifest import Manifest
from horon_bundle.verify.judge import verify_path

pytestmark = pytest.mark.cargo


@dataclass(frozen=True)
class RealRun:
    answer: dict[str, Any]
    progress: bytes
    handshake: dict[str, Any]
    rows: list[Row]
    expect: Expect
    manifest: Manifest
    library: Path


@pytest.fixture(scope="session")
def real_run(fault_bundle: Callable[[str], Path]) -> RealRun:
    bundle = fault_bundle("fault-none")
    verified = verify_path(bundle)
    assert verified.manifest is not None
    library = next((bundle / "lib").iterdir())
    rows = refusal_rows(verified.manifest.features)
    expect = expect_rows(rows, inspect_limit=INSPECT_LIMIT, frame_limit=FRAME_LIMIT)
    with private_directory("horon-test-") as root:
        for name in ("home", "instance", "config"):
            (root / name).mkdir()
        progress = root / "progress.jsonl"
        fd = os.open(progress, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        argument = {"progress_fd": fd, "instance_dir": str(root / "instance"),
                    "config_dir": str(root / "config"), "features": "",
                    "tool": "fault-none__whoami", "config": "{}",
                    "rows": [row.to_child() for row in rows], "frame_limit": FRAME_LIMIT,
                    "inspect_limit": INSPECT_LIMIT}
        try:
            outcome = run_child("doctor", library, argument=argument, home=root / "home",
                                pass_fds=(fd,))
        finally:
            os.close(fd)
        recorded = progress.read_bytes()
    probed = run_child("handshake", library)
    assert outcome.answer is not None and probed.answer is not None
    return RealRun(outcome.answer, recorded, probed.answer, rows, expect, verified.manifest,
                   library)


def judge(run: RealRun, answer: Any, progress: bytes, tmp_path: Path) -> DoctorReport:
    """phase_results + judge_phases as doctor runs them; only a Refused may escape."""
    path = tmp_path / "progress.jsonl"
    path.write_bytes(progress)
    outcome = ChildOutcome(answer=answer, returncode=0, timed_out=False, stderr="",
                           stdout_problem=None)
    transcript = phase_results(outcome, path, run.expect)
    report = DoctorReport()
    judge_phases(report, run.manifest, run.library, transcript=transcript, outcome=outcome,
                 rows=run.rows)
    return report


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=4),
    max_leaves=12)


def mutate(data: st.DataObject, document: Any) -> Any:
    """One change anywhere in `document`: a deletion, a replacement or an added key."""
    document = copy.deepcopy(document)
    holder: Any = None
    key: Any = None
    node = document
    for _ in range(data.draw(st.integers(0, 9), label="depth")):
        if isinstance(node, dict) and node:
            holder, key = node, data.draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            holder, key = node, data.draw(st.integers(0, len(node) - 1))
        else:
            break
        node = holder[key]
    action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
    if action == "add" and isinstance(node, dict):
        node[data.draw(st.text(max_size=10))] = data.draw(JSON)
    elif action == "delete" and holder is not None:
        del holder[key]
    elif holder is not None:
        holder[key] = data.draw(JSON)
    else:
        document = data.draw(JSON)
    return document


def progress_of(answer: Any) -> bytes:
    """The progress lines the observer would have written for `answer`'s phases."""
    phases = answer.get("phases") if isinstance(answer, dict) else None
    if not isinstance(phases, dict):
        return b""
    lines = []
    for name, result in phases.items():
        lines += [{"begin": name}, {"phase": name, "result": result}]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def outcome_of(run: RealRun, answer: Any, progress: bytes, tmp_path: Path,
               ) -> DoctorReport | list[str]:
    """The report, or the codes of the refusal that stopped it."""
    try:
        return judge(run, answer, progress, tmp_path)
    except Refused as exc:
        return exc.codes()


FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def test_the_real_transcript_passes(real_run: RealRun, tmp_path: Path) -> None:
    report = judge(real_run, real_run.answer, real_run.progress, tmp_path)
    assert report.ok, [f.message for f in report.findings]
    assert {c.status for c in report.checks} == {"pass"}


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_a_changed_answer_never_passes(real_run: RealRun, tmp_path: Path,
                                       data: st.DataObject) -> None:
    forged = mutate(data, real_run.answer)
    report = outcome_of(real_run, forged, real_run.progress, tmp_path)
    if isinstance(report, list):
        assert report == ["abi.child-error"]
    elif report.ok:  # only an answer that says what the real one said
        assert read_answer(forged, real_run.expect) == read_answer(real_run.answer,
                                                                   real_run.expect)
    else:
        assert report.exit_status == 1


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_answer_and_progress_forged_alike_never_crash(real_run: RealRun, tmp_path: Path,
                                                      data: st.DataObject) -> None:
    forged = mutate(data, real_run.answer)
    report = outcome_of(real_run, forged, progress_of(forged), tmp_path)
    assert not isinstance(report, list) or report == ["abi.child-error"]


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_a_changed_progress_record_never_crashes(real_run: RealRun, tmp_path: Path,
                                                 data: st.DataObject) -> None:
    lines = [json.loads(line) for line in real_run.progress.splitlines()]
    forged = mutate(data, lines)
    text = b"".join(json.dumps(line).encode() + b"\n" for line in forged) \
        if isinstance(forged, list) else json.dumps(forged).encode()
    for answer in (None, real_run.answer):
        report = judge(real_run, answer, text, tmp_path)
        if forged != lines:
            assert not report.ok


@pytest.mark.slow
@FUZZ
@given(answer=JSON, progress=st.binary(max_size=200))
def test_arbitrary_documents_are_refused_cleanly(real_run: RealRun, tmp_path: Path,
                                                 answer: Any, progress: bytes) -> None:
    answer = answer if isinstance(answer, dict) else {"phases": answer}
    report = outcome_of(real_run, answer, progress, tmp_path)
    assert report == ["abi.child-error"] if isinstance(report, list) else not report.ok


def test_an_empty_answer_is_not_conformant(real_run: RealRun, tmp_path: Path) -> None:
    """The forged verdict of old: no phases at all used to be all skips, i.e. a pass."""
    report = judge(real_run, {"phases": {}, "buffers": {"handed_out": 0, "returned": 0,
                                                        "unreturnable": 0}}, b"", tmp_path)
    assert not report.ok
    assert {f.code.name for f in report.findings} == {"abi.answer"}


def test_the_real_probe_answer_decodes(real_run: RealRun) -> None:
    advertised = advertised_from(real_run.handshake, real_run.library.name)
    assert advertised.plugin_id == "fault-none"


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_a_changed_probe_answer_is_advertised_or_refused(real_run: RealRun,
                                                        data: st.DataObject) -> None:
    forged = mutate(data, real_run.handshake)
    if not isinstance(forged, dict):
        forged = {"step": forged}
    codes: set[str] = set()
    try:
        advertised_from(forged, real_run.library.name)
    except Refused as exc:
        codes = set(exc.codes())
    assert codes <= {"abi.answer", "abi.load", "abi.status", "abi.metadata"}
