"""`horon-bundle doctor` on real bundles: the template passes, every ABI fault is caught.

Fault libraries are the real cdylibs of tests/fixtures/abi-faults, built with cargo once per
run (the `fault_bundle` fixture). Those the build's own probe refuses (a segfaulting handshake,
a 96-byte table, a wire-schema/section disagreement, a missing symbol, a refused correct
request, garbage on the answer channel, metadata that is not the declared plugin's ABI v1), and
fault-minor (to record minor 0, as for a library no build could observe), are bundled through
the same CLI with the probe switched off for that build only (`tests.session_builds.UNPROBED`):
the product has no switch for it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core import codes
from horon_bundle.core.errors import EXIT_ENVIRONMENT, Refused
from horon_bundle.doctor.run import doctor_path, phase_results
from horon_bundle.load.host import triple_from_platform
from horon_bundle.load.runner import ChildOutcome
from tests.conftest import BuiltExample
from tests.helpers import (
    FIXTURES,
    HOST,
    REPO,
    CliResult,
    assert_refused,
    cli,
    copy_bundle,
    edit_manifest,
    rewrite_listing,
    tree_snapshot,
)

pytestmark = pytest.mark.cargo

FAULTS = FIXTURES / "abi-faults"
HAS_STRACE = shutil.which("strace") is not None
FaultBundle = Callable[[str], Path]


def doctor(path: Path, tmp_path: Path, *extra: str, env: dict[str, str] | None = None,
           ) -> tuple[CliResult, dict[str, Any]]:
    """Run doctor --json with its own TMPDIR, and prove it left nothing there."""
    temp = tmp_path / "doctor-tmp"
    temp.mkdir(exist_ok=True)
    before = tree_snapshot(path) if path.is_dir() else {"": _sha(path)}
    result = cli("doctor", path, "--json", *extra, env={"TMPDIR": str(temp), **(env or {})})
    assert "Traceback" not in result.stderr, result.stderr
    assert list(temp.iterdir()) == [], "doctor left temporary files behind"
    after = tree_snapshot(path) if path.is_dir() else {"": _sha(path)}
    assert after == before, "doctor changed the bundle"
    document = result.json()
    assert document["format"] == "horon.doctor-report.v1"
    assert document["exit_status"] == result.status
    return result, document


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def results(document: dict[str, Any]) -> dict[str, str]:
    return {check["check"]: check["result"] for check in document["checks"]}


def failed_codes(document: dict[str, Any]) -> set[str]:
    return {f["code"] for check in document["checks"] for f in check["findings"]}


def messages(document: dict[str, Any]) -> str:
    return "\n".join(f["message"] for check in document["checks"] for f in check["findings"])


ALL_CHECKS = (
    "verify", "target", "library", "load", "handshake.status", "handshake.struct-size",
    "handshake.abi-version", "handshake.wire-schema", "handshake.plugin-id",
    "handshake.features", "handshake.entries", "handshake.exact-write", "section",
    "refusals.single", "refusals.order", "refusals.out-untouched", "instance.create",
    "instance.describe", "instance.tool-call", "frames.format", "frames.seq",
    "frames.terminal", "frames.size", "instance.release", "instance.shutdown",
    "instance.destroy", "buffers", "side-effects.write", "side-effects.network",
)


def assert_conformant(result: CliResult, document: dict[str, Any]) -> None:
    assert result.status == 0, result.stderr
    assert document["ok"] is True
    checks = results(document)
    assert set(checks) == set(ALL_CHECKS)
    assert "fail" not in checks.values()
    if HAS_STRACE:
        assert set(checks.values()) == {"pass"}, checks
    for name in ALL_CHECKS:  # the readable report: one line per check on stderr
        assert any(line.split()[1:2] == [name] for line in result.stderr.splitlines()), name
    assert "conformant" in result.stderr


def test_example_bundle_passes_every_check(example_release: BuiltExample,
                                           tmp_path: Path) -> None:
    result, document = doctor(example_release.bundle, tmp_path)
    assert_conformant(result, document)
    assert document["bundle"]["id"] == "example"
    assert document["host"] == HOST
    # the triple from the platform, rustc on PATH or not: doctor starts no throw-away rustc
    assert document["host_source"].startswith("derived from the platform")


def test_example_archive_passes_every_check(example_release: BuiltExample,
                                            tmp_path: Path) -> None:
    result, document = doctor(example_release.archive, tmp_path)
    assert_conformant(result, document)


def test_conformant_fixture_passes(fault_bundle: FaultBundle, tmp_path: Path) -> None:
    result, document = doctor(fault_bundle("fault-none"), tmp_path)
    assert_conformant(result, document)


# crate -> (the codes doctor must report, exactly; the check that fails first; extra args)
FAULT_CASES: dict[str, tuple[set[str], str, tuple[str, ...]]] = {
    "fault-order": ({"abi.refusal-order"}, "refusals.order", ()),
    "fault-wire": ({"abi.wire-schema", "abi.section-mismatch"}, "handshake.wire-schema", ()),
    "fault-short": ({"abi.struct-size", "abi.buffer-leak"}, "handshake.struct-size", ()),
    "fault-null-entry": ({"abi.null-entry", "abi.buffer-leak"}, "handshake.entries", ()),
    "fault-home-write": ({"doctor.side-effect-write"}, "side-effects.write", ()),
    "fault-net": ({"doctor.side-effect-network"}, "side-effects.network", ()),
    "fault-seq-gap": ({"abi.frame-seq"}, "frames.seq", ()),
    "fault-two-terminal": ({"abi.frame-terminal"}, "frames.terminal", ()),
    "fault-segv": ({"abi.crash"}, "handshake.status", ()),
    "fault-abort": ({"abi.crash"}, "instance.describe", ()),
    "fault-hang": ({"abi.timeout"}, "instance.tool-call", ("--timeout", "3")),
    "fault-no-symbol": ({"abi.load"}, "load", ()),
    "fault-status": ({"abi.status", "abi.refusal-code"}, "handshake.status", ()),
    "fault-major": ({"abi.major-mismatch"}, "handshake.abi-version", ()),
    "fault-minor": ({"abi.minor"}, "handshake.abi-version", ()),
    "fault-plugin-id": ({"abi.plugin-id"}, "handshake.plugin-id", ()),
    "fault-features": ({"abi.features"}, "handshake.features", ()),
    "fault-out-overrun": ({"abi.out-overrun"}, "refusals.out-untouched", ()),
    "fault-refusal-code": ({"abi.refusal-code"}, "refusals.single", ()),
    "fault-out-touched": ({"abi.out-touched"}, "refusals.out-untouched", ()),
    "fault-create": ({"abi.instance"}, "instance.create", ()),
    "fault-describe": ({"abi.describe"}, "instance.describe", ()),
    "fault-frame-format": ({"abi.frame-format"}, "frames.format", ()),
    "fault-frame-size": ({"abi.frame-size"}, "frames.size", ()),
    "fault-garbage": ({"abi.garbage"}, "child", ()),
}
# crate -> a message doctor must print for it (what was expected, what came back)
FAULT_SAYS: dict[str, str] = {
    "fault-no-symbol": "libfault_no_symbol.so: horon_agent_plugin_get_api_v1 is not exported",
    "fault-status": "a correct v1 request was answered 6 FEATURE_MISSING",
    "fault-major": "the table says ABI major 2, this host speaks 1 (plugin.json: 1)",
    "fault-minor": "the table says ABI minor 1, plugin.json says 0",
    "fault-plugin-id": "the table's plugin_id is 'example', plugin.json says 'fault-plugin-id'",
    "fault-features": "the table's features is 'clock', plugin.json says ''",
    "fault-out-overrun": "a newer host: struct_size 32, host_api_minor 7, out_capacity 256: "
                         "wrote up to byte 255; a v1 table is 104 bytes",
    "fault-refusal-code": "wire_schema NULL: expected 4 WIRE_SCHEMA_MISMATCH, got 1 NULL_POINTER",
    "fault-out-touched": "requires 'horon-doctor-absent': refused with 6 FEATURE_MISSING but "
                         "bytes 0..103 of *out changed",
    "fault-create": "create answered -2 (instance NULL) for config {}",
    "fault-describe": "describe id is 'example', plugin.json says 'fault-describe'",
    "fault-frame-format": "frame 0: not strict JSON",
    "fault-frame-size": "frame 0: 67108865 bytes, above the 64 MiB limit",
    "fault-garbage": "libfault_garbage.so: 2 lines on stdout where one JSON answer belongs",
}


@pytest.mark.slow
@pytest.mark.parametrize("crate", sorted(FAULT_CASES))
def test_each_fault_is_caught_with_its_own_code(crate: str, fault_bundle: FaultBundle,
                                                tmp_path: Path) -> None:
    expected, check, extra = FAULT_CASES[crate]
    if check.startswith("side-effects") and not HAS_STRACE:
        pytest.skip("needs strace (installed by .ci/run)")
    bundle = fault_bundle(crate)
    result, document = doctor(bundle, tmp_path, *extra)
    for code in expected:
        assert_refused(result, code)
    assert failed_codes(document) == expected, messages(document)
    assert results(document)[check] == "fail"
    assert document["ok"] is False
    if crate in FAULT_SAYS:
        assert FAULT_SAYS[crate] in messages(document), messages(document)


@pytest.mark.slow
def test_fault_messages_name_what_happened(fault_bundle: FaultBundle, tmp_path: Path) -> None:
    _, document = doctor(fault_bundle("fault-order"), tmp_path)
    assert "abi_major 2 + out_capacity 96: expected 3 ABI_MAJOR_MISMATCH, got 5 " \
           "CAPACITY_TOO_SMALL" in messages(document)
    _, document = doctor(fault_bundle("fault-segv"), tmp_path)
    assert "SIGSEGV during the handshake" in messages(document)
    assert results(document)["instance.create"] == "skip"
    _, document = doctor(fault_bundle("fault-abort"), tmp_path)
    assert "SIGABRT during the describe" in messages(document)
    assert results(document)["refusals.order"] == "pass"  # phases before the crash judged
    if HAS_STRACE:
        _, document = doctor(fault_bundle("fault-home-write"), tmp_path)
        assert "during handshake" in messages(document)
        assert "$HOME/.fault-home-write" in messages(document)
        _, document = doctor(fault_bundle("fault-net"), tmp_path)
        assert "during describe: connect 127.0.0.1:9" in messages(document)


@pytest.mark.slow
def test_hang_is_killed_and_leaves_no_process(fault_bundle: FaultBundle, tmp_path: Path) -> None:
    bundle = fault_bundle("fault-hang")
    result, document = doctor(bundle, tmp_path, "--timeout", "2")
    assert_refused(result, "abi.timeout")
    assert "during the tool-call phase" in messages(document)
    assert results(document)["instance.describe"] == "pass"
    ours = str(tmp_path / "doctor-tmp").encode()  # doctor's TMPDIR: the child's paths
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            assert ours not in cmdline.read_bytes(), "a child of doctor survived"
        except OSError:
            continue


@pytest.mark.slow
def test_what_cannot_run_is_skipped_with_the_reason(fault_bundle: FaultBundle,
                                                   tmp_path: Path) -> None:
    _, document = doctor(fault_bundle("fault-no-symbol"), tmp_path)
    checks = {c["check"]: c for c in document["checks"]}
    for name in ("handshake.status", "refusals.single", "instance.tool-call", "buffers"):
        assert checks[name]["result"] == "skip", name
        assert checks[name]["note"] == "the library did not load", name
    _, document = doctor(fault_bundle("fault-status"), tmp_path)
    checks = {c["check"]: c for c in document["checks"]}
    assert checks["handshake.struct-size"]["note"] == "the handshake refused a correct request"
    assert checks["instance.create"]["result"] == "skip"
    assert "a newer host: struct_size 32, host_api_minor 7, out_capacity 256: expected 0 OK, " \
           "got 6 FEATURE_MISSING" in messages(document)
    _, document = doctor(fault_bundle("fault-create"), tmp_path)
    checks = {c["check"]: c for c in document["checks"]}
    for name in ("instance.describe", "instance.tool-call", "instance.destroy"):
        assert checks[name]["result"] == "skip", name
        assert checks[name]["note"] == "create did not make an instance"


def test_garbage_on_the_answer_channel_keeps_the_progress(fault_bundle: FaultBundle,
                                                          tmp_path: Path) -> None:
    """The child's answer is garbage, but every phase it reported on its progress descriptor
    is still judged; only the final `child` check fails."""
    _, document = doctor(fault_bundle("fault-garbage"), tmp_path)
    checks = results(document)
    assert checks["child"] == "fail"
    assert [name for name, result in checks.items() if result == "fail"] == ["child"]
    for name in ("handshake.status", "refusals.order", "instance.tool-call", "buffers"):
        assert checks[name] == "pass", name


@pytest.mark.slow
def test_minor_observed_by_the_probe_is_recorded(tmp_path: Path,
                                                 cargo_target_dir: Path) -> None:
    """abi.minor is not a false alarm: a build that loads the library records its minor."""
    out = tmp_path / "out"
    built = cli("build", FAULTS, "--plugin", "fault-minor", "--out", out, "--target-dir",
                cargo_target_dir)
    assert built.status == 0, built.stderr
    bundle = out / f"fault-minor-0.1.0-{HOST}"
    assert json.loads((bundle / "plugin.json").read_text())["abi"] == {"major": 1, "minor": 1}
    result, document = doctor(bundle, tmp_path)
    assert result.status == 0, result.stderr
    assert results(document)["handshake.abi-version"] == "pass"


def retarget(bundle: Path, target: str) -> None:
    """A bundle for another target that still verifies: plugin.json, provenance, sums."""
    provenance_path = bundle / "provenance.json"
    provenance = json.loads(provenance_path.read_text())
    provenance["predicate"]["buildDefinition"]["externalParameters"]["target"] = target
    data = (json.dumps(provenance, indent=2, sort_keys=True) + "\n").encode()
    provenance_path.write_bytes(data)
    rewrite_listing(bundle, "provenance.json")

    def change(document: dict[str, Any]) -> None:
        document["target"] = target
        for asset in document["assets"]:
            if asset["role"] == "provenance":
                asset["sha256"] = hashlib.sha256(data).hexdigest()
                asset["size"] = len(data)

    edit_manifest(bundle, change)


def test_other_target_is_refused_before_loading(fault_bundle: FaultBundle,
                                               tmp_path: Path) -> None:
    # The segfaulting library: had doctor loaded it, the report would say abi.crash.
    bundle = copy_bundle(fault_bundle("fault-segv"), tmp_path)
    retarget(bundle, "aarch64-unknown-linux-gnu")
    assert cli("verify", bundle).status == 0
    result, document = doctor(bundle, tmp_path)
    assert_refused(result, "target.mismatch")
    assert failed_codes(document) == {"target.mismatch"}
    assert "aarch64-unknown-linux-gnu" in messages(document)
    assert HOST in messages(document)
    assert "load" not in results(document)


def test_refused_bundle_stops_at_verify(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    library = next((bundle / "lib").iterdir())
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0xFF
    library.write_bytes(bytes(data))
    result, document = doctor(bundle, tmp_path)
    assert_refused(result, "checksum.mismatch")
    assert list(results(document)) == ["verify"]


def test_not_a_bundle(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    result = cli("doctor", missing)
    assert_refused(result, "input.unreadable")
    assert not missing.exists()


def _path_without(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only python (the child is started by absolute path anyway)."""
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for tool in tools:
        found = shutil.which(tool)
        if found:
            (directory / tool).symlink_to(found)
    return str(directory)


def test_without_tracer_says_what_was_skipped(fault_bundle: FaultBundle, tmp_path: Path) -> None:
    path = _path_without(tmp_path)  # no strace, no unshare, no rustc
    result, document = doctor(fault_bundle("fault-home-write"), tmp_path, env={"PATH": path})
    assert_refused(result, "doctor.side-effect-write")
    assert "$HOME/.fault-home-write was created" in messages(document)
    checks = {c["check"]: c for c in document["checks"]}
    assert checks["side-effects.network"]["result"] == "skip"
    assert "strace not found" in checks["side-effects.network"]["note"]
    assert document["environment"]["tracer"] is None
    assert document["environment"]["network_namespace"] is False
    assert any("no network namespace" in note for note in document["notes"])
    assert document["host_source"].startswith("derived from the platform")
    assert document["host"] == HOST


def test_without_tracer_the_network_fault_is_not_pretended(fault_bundle: FaultBundle,
                                                           tmp_path: Path) -> None:
    result, document = doctor(fault_bundle("fault-net"), tmp_path,
                              env={"PATH": _path_without(tmp_path)})
    assert result.status == 0, result.stderr
    assert results(document)["side-effects.network"] == "skip"
    assert "skip side-effects.network" in " ".join(result.stderr.split())


def test_windows_is_refused_as_unsupported(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(Refused) as caught:
        doctor_path(tmp_path)
    assert caught.value.codes() == ["doctor.unsupported-platform"]
    assert caught.value.exit_status == EXIT_ENVIRONMENT


def test_bad_timeout_is_an_environment_refusal(tmp_path: Path) -> None:
    with pytest.raises(Refused) as caught:
        doctor_path(tmp_path, timeout=0)
    assert caught.value.findings[0].code is codes.DOCTOR_ENVIRONMENT


@pytest.mark.parametrize(("system", "machine", "libc", "triple"), [
    ("linux", "x86_64", "glibc", "x86_64-unknown-linux-gnu"),
    ("linux", "aarch64", "", "aarch64-unknown-linux-musl"),
    ("darwin", "arm64", "", "aarch64-apple-darwin"),
    ("darwin", "x86_64", "", "x86_64-apple-darwin"),
    ("linux", "i686", "glibc", None),
    ("sunos5", "x86_64", "", None),
])
def test_triple_from_platform(system: str, machine: str, libc: str, triple: str | None) -> None:
    assert triple_from_platform(system, machine, libc) == triple


def test_doctor_is_documented() -> None:
    text = (REPO / "docs" / "doctor.md").read_text()
    for code in ("target.mismatch", "abi.refusal-order", "doctor.side-effect-write",
                 "doctor.side-effect-network", "abi.frame-seq", "abi.buffer-leak"):
        assert f"`{code}`" in text, code
    assert "templates/include/horon_plugin_abi_v1.h" in text


@pytest.mark.parametrize("value", ["0", "-3", "nan", "soon"])
def test_bad_timeout_on_the_command_line_is_a_usage_error(value: str, tmp_path: Path) -> None:
    result = cli("doctor", tmp_path, "--timeout", value)
    assert result.status == 2
    assert "Traceback" not in result.stderr


def test_a_failing_doctor_child_is_a_refusal_not_a_crash(tmp_path: Path) -> None:
    """The observer in the child reports its own failure; doctor refuses with its code."""
    progress = tmp_path / "progress.jsonl"
    progress.write_bytes(b'{"begin": "load"}\n')
    outcome = ChildOutcome(answer={"child_error": "ValueError: the library lied"},
                           returncode=0, timed_out=False, stderr="", stdout_problem=None)
    with pytest.raises(Refused) as refused:
        phase_results(outcome, progress)
    assert refused.value.codes() == ["abi.child-error"]
