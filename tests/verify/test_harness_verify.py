"""Verifying harness bundles: refs first, routing by content, host events, hook lint."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.harness_support import (
    PLUGIN_NAME,
    ZIP_NAME,
    command_hook,
    hooks_document,
    write_json,
    write_plugin,
)
from tests.helpers import assert_refused, cli, tree_snapshot


def _built(tmp_path: Path, **options: object) -> Path:
    workspace = write_plugin(tmp_path / "plugin", **options)  # type: ignore[arg-type]
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out)
    assert result.status == 0, result.stderr
    return out / ZIP_NAME


def _warning_codes(stderr: str) -> list[str]:
    return [line.split()[1].rstrip(":") for line in stderr.splitlines()
            if line.startswith("WARNING ")]


def test_verify_by_ref_and_by_zip(tmp_path: Path) -> None:
    archive = _built(tmp_path)
    by_ref = cli("verify", f"{archive}.ref.json", "--json")
    assert by_ref.status == 0, by_ref.stderr
    report = by_ref.json()
    assert report["kind"] == "harness" and report["bundle"]["name"] == PLUGIN_NAME
    assert [c["check"] for c in report["checks"]][:2] == ["ref.digest", "archive"]
    moved = tmp_path / "elsewhere.zip"
    shutil.copy(archive, moved)
    assert cli("verify", f"{archive}.ref.json", "--zip", moved).status == 0
    assert cli("verify", archive, "--zip", moved).status == 2  # --zip goes with a ref only
    alone = cli("verify", moved)  # no ref beside it: verified, and it says so
    assert alone.status == 0
    assert "elsewhere.zip.ref.json" in alone.stderr and "not pinned" in alone.stderr


def test_a_zip_tampered_after_its_ref_is_refused_before_any_entry_is_read(
        tmp_path: Path) -> None:
    archive = _built(tmp_path)
    data = bytearray(archive.read_bytes())
    data[10:40] = b"\xff" * 30  # the first local header: no zip reader could read it now
    archive.write_bytes(bytes(data))
    before = tree_snapshot(tmp_path)
    for target in (Path(f"{archive}.ref.json"), archive):
        result = cli("verify", target, "--json")
        assert_refused(result, "ref.digest")
        assert result.codes == ["ref.digest"], result.codes  # no archive.* finding: not opened
        checks = [c["check"] for c in result.json()["checks"]]
        assert checks == ["ref.digest"]
    assert tree_snapshot(tmp_path) == before


def test_a_ref_naming_another_plugin_or_malformed_is_refused(tmp_path: Path) -> None:
    archive = _built(tmp_path)
    ref = Path(f"{archive}.ref.json")
    document = json.loads(ref.read_text())
    write_json(ref, {**document, "name": "other-plugin"})
    assert_refused(cli("verify", ref), "ref.name")
    write_json(ref, {**document, "extra": 1})
    assert_refused(cli("verify", ref), "ref.invalid")
    ref.write_text('{"name": "guard-kit", "name": "x", "sha256": "00"}')
    assert_refused(cli("verify", ref), "json.duplicate-key")
    archive.unlink()
    write_json(ref, document)
    assert_refused(cli("verify", ref), "ref.zip-missing")


def test_routing_is_by_content_not_by_name(tmp_path: Path) -> None:
    archive = _built(tmp_path)
    renamed = tmp_path / "looks-native-0.1.0-x86_64-unknown-linux-gnu.zip"
    shutil.copy(archive, renamed)
    result = cli("verify", renamed, "--json")
    assert result.status == 0 and result.json()["kind"] == "harness"


def test_commands_that_read_native_bundles_name_a_harness_bundle_as_one(
        tmp_path: Path) -> None:
    """inspect, doctor and reproduce read native bundles: given a harness zip, its ref or an
    unpacked harness directory they say so (and point to verify), not 'plugin.json is
    missing' of a bundle that has one under .claude-plugin/."""
    archive = _built(tmp_path)
    ref = archive.with_name(archive.name + ".ref.json")
    unpacked = tmp_path / "unpacked"
    assert cli("fetch", ref, "--into", unpacked).status == 0
    before = tree_snapshot(tmp_path)
    for args in (("inspect", archive), ("inspect", ref, "--json"), ("inspect", unpacked),
                 ("doctor", archive), ("doctor", unpacked, "--json"),
                 ("reproduce", archive, "--source", tmp_path / "plugin")):
        result = cli(*args)
        assert_refused(result, "layout.harness-bundle")
        assert "is missing" not in result.stderr + result.stdout, args
        assert "horon-bundle verify" in result.stderr, args
    assert tree_snapshot(tmp_path) == before


def _rezip(archive: Path, change: dict[str, bytes | None]) -> None:
    with zipfile.ZipFile(archive) as source:
        items = [(i, source.read(i)) for i in source.infolist()]
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in items:
            replacement = change.get(info.filename, data)
            if replacement is not None:
                target.writestr(info, replacement)


def test_a_catalogue_edited_after_the_build_is_refused(tmp_path: Path) -> None:
    archive = _built(tmp_path)
    Path(f"{archive}.ref.json").unlink()
    with zipfile.ZipFile(archive) as source:
        catalogue = json.loads(source.read("catalogue.json"))
        sums = source.read("SHA256SUMS").decode()
    catalogue["hooks"] = []  # hide the guard from whoever lists the bundle
    data = (json.dumps(catalogue, indent=2, sort_keys=True) + "\n").encode()
    import hashlib  # noqa: PLC0415

    lines = [f"{hashlib.sha256(data).hexdigest()}  catalogue.json" if line.endswith(
        "  catalogue.json") else line for line in sums.splitlines()]
    _rezip(archive, {"catalogue.json": data, "SHA256SUMS": ("\n".join(lines) + "\n").encode()})
    result = cli("verify", archive)
    assert_refused(result, "harness.catalogue")
    assert "harness.provenance" in result.codes  # its subject digest no longer matches


def test_a_file_changed_inside_the_zip_is_refused(tmp_path: Path) -> None:
    archive = _built(tmp_path)
    Path(f"{archive}.ref.json").unlink()
    _rezip(archive, {"hooks/guard.sh": b"#!/bin/sh\nexit 0\n"})
    assert_refused(cli("verify", archive), "checksum.mismatch")


def test_an_event_the_host_cannot_fire_is_named_and_still_valid(tmp_path: Path) -> None:
    archive = _built(tmp_path, hooks=hooks_document(
        Notification=[command_hook('"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"', matcher=None)],
        PreToolUse=[command_hook('"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"')]))
    claude = cli("verify", archive, "--host", "claude-code")
    assert claude.status == 0 and "harness.event-not-fired" not in claude.stderr
    muse = cli("verify", archive, "--host", "muse-code@0.2.1", "--json")
    assert muse.status == 0, muse.stderr
    assert _warning_codes(muse.stderr) == ["harness.event-not-fired"]
    assert "muse-code@0.2.1 cannot fire Notification (absent)" in muse.stderr
    warned = muse.json()["warnings"]
    assert [w["code"] for w in warned] == ["harness.event-not-fired"]
    strict = cli("verify", archive, "--host", "muse-code", "--strict")
    assert_refused(strict, "harness.event-not-fired")
    built = cli("build", tmp_path / "plugin", "--out", tmp_path / "strict-out", "--host",
                "muse-code", "--strict")
    assert_refused(built, "harness.event-not-fired")
    assert not (tmp_path / "strict-out").exists()


def test_a_user_profile_file_names_what_it_understands(tmp_path: Path) -> None:
    archive = _built(tmp_path)
    profile = tmp_path / "horsie.json"
    write_json(profile, {
        "format": "horon.host-profile.v1", "host": "horsie", "version": "1.0.0",
        "description": "a sandbox host, as measured", "source": "our own measurements",
        "events": {"fired": ["PreToolUse", "Stop"], "understood": ["SessionStart"],
                   "absent": ["Notification"]},
        "broken": {"hook.permission-ask": "records ask and treats it as allow"}})
    result = cli("verify", archive, "--host", profile)
    assert result.status == 0, result.stderr
    assert "horsie@1.0.0 cannot fire SessionStart (understood but not fired)" in result.stderr
    write_json(profile, {"format": "horon.host-profile.v1", "host": "horsie"})
    assert_refused(cli("verify", archive, "--host", profile), "profile.invalid", status=2)
    assert_refused(cli("verify", archive, "--host", "nosuch-host"), "profile.unknown", status=2)
    assert_refused(cli("verify", archive, "--host", "claude-code@0.0.1"), "profile.unknown",
                   status=2)


def test_an_event_no_profile_knows_is_refused(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(
        pretooluse=[command_hook('"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"')]))
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "harness.unknown-event")
    assert "did you mean PreToolUse?" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [
    "${CLAUDE_PLUGIN_ROOT}/hooks/absent.sh",
    'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/absent.py" --fast',
    'bash "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh" "$CLAUDE_PLUGIN_ROOT/hooks/absent.py"',
    "cd /tmp && node ${CLAUDE_PLUGIN_ROOT}/dist/absent.js | tee log",
])
def test_a_hook_command_missing_from_the_bundle_is_refused(tmp_path: Path, command: str) -> None:
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(
        PreToolUse=[command_hook(command)]))
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "hook.command-missing")
    assert not (tmp_path / "out").exists()


def test_exec_form_args_and_mcp_servers_are_checked_too(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(
        Stop=[command_hook("node", matcher=None,
                           args=["${CLAUDE_PLUGIN_ROOT}/hooks/with space/absent.js"])]))
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "hook.command-missing")
    assert "with space/absent.js" in result.stderr
    write_plugin(tmp_path / "plugin")
    write_json(workspace / ".mcp.json", {"mcpServers": {"db": {
        "command": "${CLAUDE_PLUGIN_ROOT}/servers/db-server.js"}}})
    assert_refused(cli("build", workspace, "--out", tmp_path / "out"), "hook.command-missing")


@pytest.mark.parametrize("command", [
    "${CLAUDE_PLUGIN_ROOT}/../outside.sh",
    'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/../../outside.py"',
])
def test_a_hook_path_escaping_the_root_is_refused(tmp_path: Path, command: str) -> None:
    (tmp_path / "outside.sh").write_text("#!/bin/sh\n")
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(
        PreToolUse=[command_hook(command)]))
    assert_refused(cli("build", workspace, "--out", tmp_path / "out"), "hook.command-outside")
    assert not (tmp_path / "out").exists()


def test_a_manifest_path_escaping_the_root_is_refused(tmp_path: Path) -> None:
    for value in ("./../shared/commands", "/abs/commands", "commands", ".\\commands"):
        workspace = write_plugin(tmp_path / "plugin", manifest={
            "name": PLUGIN_NAME, "version": "1.0.0", "commands": value})
        result = cli("build", workspace, "--out", tmp_path / "out")
        assert_refused(result, "harness.path-unsafe")
        assert not (tmp_path / "out").exists()


def test_the_same_rules_hold_in_verify(tmp_path: Path) -> None:
    """A zip whose hook script was removed (and re-listed consistently) is refused by verify."""
    archive = _built(tmp_path)
    Path(f"{archive}.ref.json").unlink()
    with zipfile.ZipFile(archive) as source:
        sums = source.read("SHA256SUMS").decode()
        statement = json.loads(source.read("provenance.json"))
    statement["subject"] = [s for s in statement["subject"] if s["name"] != "hooks/guard.sh"]
    data = (json.dumps(statement, indent=2, sort_keys=True) + "\n").encode()
    import hashlib  # noqa: PLC0415

    lines = [line for line in sums.splitlines() if not line.endswith("  hooks/guard.sh")]
    lines = [f"{hashlib.sha256(data).hexdigest()}  provenance.json"
             if line.endswith("  provenance.json") else line for line in lines]
    _rezip(archive, {"hooks/guard.sh": None, "provenance.json": data,
                     "SHA256SUMS": ("\n".join(lines) + "\n").encode()})
    result = cli("verify", archive)
    assert_refused(result, "hook.command-missing")
    assert result.codes == ["hook.command-missing"]


CREDENTIAL_SCRIPT = '''import os
token = os.environ["ACP_BEARER_TOKEN"]
'''


def test_a_credential_read_from_the_environment_warns_and_is_refused_on_muse(
        tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "hooks" / "start.py").write_text("import helper\n")
    (workspace / "hooks" / "helper.py").write_text(CREDENTIAL_SCRIPT)  # two files away
    out = tmp_path / "out"
    built = cli("build", workspace, "--out", out)
    assert built.status == 0, built.stderr
    assert "hook.env-credential" in _warning_codes(built.stderr)
    assert "ACP_BEARER_TOKEN" in built.stderr and "muse-code@0.2.1" in built.stderr
    archive = out / ZIP_NAME
    assert cli("verify", archive, "--host", "claude-code").status == 0
    muse = cli("verify", archive, "--host", "muse-code")
    assert_refused(muse, "hook.env-credential")
    assert "cleared environment" in muse.stderr
    assert_refused(cli("verify", archive, "--strict"), "hook.env-credential")
    write_json(workspace / ".mcp.json", {"mcpServers": {"notes": {
        "command": "npx", "args": ["notes-server"], "env": {"API": "${NOTES_API_KEY}"}}}})
    (workspace / "hooks" / "helper.py").write_text("pass\n")
    result = cli("build", workspace, "--out", tmp_path / "out2", "--host", "muse-code")
    assert_refused(result, "hook.env-credential")
    assert "NOTES_API_KEY" in result.stderr


def test_permission_ask_warns_and_a_profile_can_mark_it_broken(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "hooks" / "guard.sh").write_text(
        "#!/bin/sh\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\"}}'\n")
    out = tmp_path / "out"
    built = cli("build", workspace, "--out", out)
    assert built.status == 0, built.stderr
    assert _warning_codes(built.stderr) == ["hook.permission-ask"]
    assert "hosts with no permission prompt" in built.stderr
    profile = tmp_path / "horsie.json"
    write_json(profile, {
        "format": "horon.host-profile.v1", "host": "horsie", "version": "1", "description": "",
        "source": "", "events": {"fired": ["PreToolUse", "SessionStart"], "understood": [],
                                 "absent": []},
        "broken": {"hook.permission-ask": "records ask and treats it as allow"}})
    result = cli("verify", out / ZIP_NAME, "--host", profile)
    assert_refused(result, "hook.permission-ask")
    assert "treats it as allow" in result.stderr


def test_an_http_pretooluse_hook_warns(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(PreToolUse=[
        {"matcher": "Bash", "hooks": [{"type": "http", "url": "https://gate.example/check",
                                       "timeout": 5}]}]))
    out = tmp_path / "out"
    built = cli("build", workspace, "--out", out)
    assert built.status == 0, built.stderr
    assert _warning_codes(built.stderr) == ["hook.http-pretooluse"]
    assert "fails" in built.stderr or "closed" in built.stderr
    assert_refused(cli("verify", out / ZIP_NAME, "--strict"), "hook.http-pretooluse")


def test_frontmatter_the_host_quotes_loads_and_what_it_drops_is_named(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Use it when: the diff is large\n---\nbody\n")
    (workspace / "agents" / "examples.md").write_text(
        "---\nname: examiner\ndescription: Use it when: x. Examples:\n\nContext: a diff\n"
        "user: \"review\"\nassistant: \"ok\"\n<example>x</example>\nmodel: sonnet\n---\n"
        "body\n")
    out = tmp_path / "out"
    built = cli("build", workspace, "--out", out)
    assert built.status == 0, built.stderr
    assert _warning_codes(built.stderr) == ["harness.frontmatter-invalid"]
    assert "agents/examples.md" in built.stderr and "reviewer.md" not in built.stderr
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        agents = json.loads(archive.read("catalogue.json"))["agents"]
    assert agents == [
        {"id": "examples", "path": "agents/examples.md", "frontmatter": {},
         "frontmatter_read_as": "dropped"},  # named after its file; no Context, user …
        {"id": "reviewer", "path": "agents/reviewer.md", "frontmatter_read_as": "yaml-quoted",
         "frontmatter": {"name": "reviewer", "description": "Use it when: the diff is large"}}]
    assert_refused(cli("verify", out / ZIP_NAME, "--strict"), "harness.frontmatter-invalid")
    host = cli("verify", out / ZIP_NAME, "--host", "claude-code@2.1.332")
    assert_refused(host, "harness.frontmatter-invalid")
    assert "broken on claude-code@2.1.332" in host.stderr
    assert cli("verify", out / ZIP_NAME, "--host", "muse-code").status == 0


def test_unchecked_and_unexecutable_hook_scripts_warn(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(
        PreToolUse=[command_hook('"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"'),
                    command_hook("${CLAUDE_PLUGIN_ROOT}/hooks/$TOOL.sh")]))
    (workspace / "hooks" / "guard.sh").chmod(0o644)
    out = tmp_path / "out"
    built = cli("build", workspace, "--out", out)
    assert built.status == 0, built.stderr
    assert sorted(_warning_codes(built.stderr)) == ["hook.command-unresolved",
                                                    "hook.not-executable",
                                                    "hook.unquoted-variable"]
    strict = cli("verify", out / ZIP_NAME, "--strict")
    assert_refused(strict, "hook.not-executable")
    assert "hook.command-unresolved" in strict.codes


def test_missing_manifest_components_and_unsafe_files_are_refused(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", manifest={
        "name": PLUGIN_NAME, "version": "1.0.0", "agents": "./more-agents/a.md",
        "hooks": "./config/hooks.json"})
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "harness.path-missing")
    assert "more-agents" in result.stderr and "config/hooks.json" in result.stderr
    plain = tmp_path / "not-a-plugin"
    (plain / ".claude-plugin").mkdir(parents=True)
    (plain / ".claude-plugin" / "marketplace.json").write_text(
        '{"name": "m", "owner": {"name": "o"}, "plugins": []}')
    assert cli("build", plain, "--out", tmp_path / "empty").status == 0
    (plain / ".claude-plugin" / "marketplace.json").unlink()
    (plain / ".muse-plugin").mkdir()
    (plain / ".muse-plugin" / "notes.txt").write_text("no manifest here\n")
    from horon_bundle.core.errors import Findings  # noqa: PLC0415
    from horon_bundle.model.harness.reader import read_plugin  # noqa: PLC0415
    from horon_bundle.verify.reading.directory import DirectorySource  # noqa: PLC0415

    refusals = Findings()
    assert read_plugin(DirectorySource(plain), refusals=refusals, warnings=Findings()) is None
    assert [f.code.name for f in refusals] == ["harness.manifest-missing"]  # and no name
    workspace = write_plugin(tmp_path / "plugin2")
    (workspace / "commands" / "CON.md").write_text("reserved on Windows\n")
    assert_refused(cli("build", workspace, "--out", tmp_path / "out3"), "harness.file-type")


@pytest.mark.slow
def test_verifying_a_harness_zip_runs_nothing_and_loads_no_stage(tmp_path: Path) -> None:
    from tests.project.test_architecture import HEAVY, STAGES, _loaded, _observe  # noqa: PLC0415

    archive = _built(tmp_path)
    for target in (archive, Path(f"{archive}.ref.json")):
        seen = _observe("verify", target, "--host", "muse-code")
        assert seen["status"] == 0
        assert seen["events"] == [], "verify started a process or loaded a library"
        assert _loaded(seen["modules"], STAGES) == []
        assert _loaded(seen["modules"], HEAVY) == []
