"""The gate: unless both variables enable publishing, one line, exit 0, nothing contacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from horon_bundle.publish.gate import read_gate
from tests.helpers import assert_refused, cli, tree_snapshot
from tests.publish_support import (
    Registry,
    Releases,
    make_dist,
)

ENABLED, DESTINATION = "HORON_PUBLISH_ENABLED", "HORON_PUBLISH_DESTINATION"
OCI = "oci-destination"  # replaced by the running registry's address


@pytest.mark.parametrize(("variables", "expected"), [
    ({}, [f"{ENABLED} is not set", f"{DESTINATION} is not set"]),
    ({ENABLED: "true"}, [f"{DESTINATION} is not set"]),
    ({DESTINATION: OCI}, [f"{ENABLED} is not set"]),
    ({ENABLED: "True", DESTINATION: OCI}, [f"{ENABLED} is 'True', not exactly 'true'"]),
    ({ENABLED: "1", DESTINATION: OCI}, [f"{ENABLED} is '1', not exactly 'true'"]),
    ({ENABLED: "true ", DESTINATION: OCI}, [f"{ENABLED} is 'true ', not exactly 'true'"]),
    # GitHub expands an undefined vars.X to the empty string: empty is "not set"
    ({ENABLED: "", DESTINATION: ""}, [f"{ENABLED} is not set", f"{DESTINATION} is not set"]),
    ({ENABLED: "true", DESTINATION: ""}, [f"{DESTINATION} is not set"]),
])
def test_closed_gate_skips_with_one_line_and_contacts_nothing(
        tmp_path: Path, registry: Registry, releases: Releases, variables: dict[str, str],
        expected: list[str]) -> None:
    env = {name: registry.destination if value == OCI else value
           for name, value in variables.items()}
    dist = make_dist(tmp_path / "dist", releases.example, releases.example_qa)
    before = tree_snapshot(tmp_path)
    seen = len(registry.accesses())
    commands: list[tuple[str | Path, ...]] = [("publish", dist)]
    if variables.get(ENABLED) in (None, "True"):
        commands += [("publish", dist, "--dry-run"), ("yank", "example", "0.1.0", "--reason", "x")]
    for command in commands:
        result = cli(*command, env=env)
        assert result.status == 0, result.stderr
        lines = result.stdout.splitlines()  # the result: one line on stdout
        assert lines == [f"{command[0]} skipped: " + "; ".join(expected)], lines
        set_wrong = variables.get(ENABLED) not in (None, "", "true")
        assert ("publish.switch-value" in result.warnings) is set_wrong, result.stderr
        assert "::warning" not in result.stderr  # annotations only under GitHub Actions
        if not set_wrong:
            assert result.stderr == ""
    as_json = cli("publish", dist, "--json", env=env)
    assert as_json.status == 0
    assert as_json.json()["skipped"] is True
    assert as_json.json()["reason"] == "publish skipped: " + "; ".join(expected)
    assert len(registry.accesses()) == seen, "a closed gate contacted the registry"
    assert tree_snapshot(tmp_path) == before


def test_closed_gate_reads_no_release(tmp_path: Path) -> None:
    """Not even a missing or broken release directory is looked at."""
    result = cli("publish", tmp_path / "no-such-dir", env={ENABLED: "false"})
    assert result.status == 0
    assert "publish skipped" in result.stdout


@pytest.mark.parametrize("value", ["1", "yes", "True", "TRUE", "on", "false"])
def test_a_switch_set_to_anything_but_true_warns(tmp_path: Path, value: str) -> None:
    """A set-and-wrong switch still skips (exit 0) but is not the quiet line of an unset one:
    a WARNING with its code and hint, and under GitHub Actions a warning annotation."""
    env = {ENABLED: value, DESTINATION: (tmp_path / "store").as_uri()}
    for command in (("publish", tmp_path / "dist"), ("yank", "example", "0.1.0", "--reason", "x")):
        local = cli(*command, env=env)
        assert local.status == 0
        assert local.stdout.startswith(f"{command[0]} skipped: {ENABLED} is {value!r}")
        assert local.warnings == ["publish.switch-value"], local.stderr
        assert "hint: Set HORON_PUBLISH_ENABLED=true to publish" in local.stderr
        assert "::warning" not in local.stderr
        ci = cli(*command, env={**env, "GITHUB_ACTIONS": "true"})
        annotations = [line for line in ci.stderr.splitlines() if line.startswith("::")]
        assert len(annotations) == 1, ci.stderr
        assert annotations[0].startswith("::warning title=publish.switch-value::")
        assert ci.stdout == local.stdout
    unset = cli("publish", tmp_path / "dist", env={ENABLED: "", "GITHUB_ACTIONS": "true"})
    assert unset.warnings == [] and "::warning" not in unset.stderr


@pytest.mark.parametrize(("value", "secret"), [
    ("ftp://host/ns", None),
    ("oci://", None),
    ("oci://127.0.0.1:99999/ns", None),
    ("oci://127.0.0.1:5000", None),
    ("oci://127.0.0.1:5000/Upper", None),
    ("oci://127.0.0.1:5000/ns/", None),
    ("oci://127.0.0.1:5000/ns?x=1", None),
    ("oci://robot:hunter2-secret@127.0.0.1:5000/ns", "hunter2-secret"),
    ("file://relative/dir", None),
    ("file:///a/../b", None),
    ("/plain/path", None),
])
def test_malformed_destination_is_refused(tmp_path: Path, releases: Releases, value: str,
                                          secret: str | None) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, env={ENABLED: "true", DESTINATION: value})
    assert_refused(result, "publish.destination", status=3)
    if secret:
        assert secret not in result.stderr + result.stdout
    assert tree_snapshot(tmp_path) == before


def test_gate_reader() -> None:
    assert read_gate({ENABLED: "true", DESTINATION: "file:///x"}).destination == "file:///x"
    assert not read_gate({ENABLED: "TRUE", DESTINATION: "file:///x"}).open
    assert read_gate({}).skip_line("yank").startswith("yank skipped: ")
