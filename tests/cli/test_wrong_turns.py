"""The quiet wrong turns a new user takes in the first hour, each answered with the message the
user needs: `doctor ID` right after `install ID`, a harness plugin without its manifest, a
name that is not kebab-case, a host named once per message, a zip entry whose mode has no
file-type bits. (The publish switch set to something other than `true`:
tests/publish/test_publish_gate.py; `--help`: tests/cli/test_help.py.)"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.harness_support import ZIP_NAME, write_json, write_plugin
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.install_support import Bundles


@pytest.mark.slow
def test_doctor_right_after_install_checks_the_only_installed_version(
        bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert cli("install", bundles.v1, "--home", home).status == 0  # installed, not enabled
    doctored = cli("doctor", "example", "--home", home)
    assert doctored.status == 0, doctored.stderr
    assert doctored.stdout.startswith(f"installed example 0.1.0 {HOST} verifies: ")
    assert "conformant" in doctored.stdout
    assert (f"note: no version of example is enabled for {HOST}: checking 0.1.0, the only "
            "one installed") in doctored.stderr
    as_json = cli("doctor", "example", "--home", home, "--json")
    assert as_json.status == 0 and as_json.json()["ok"] is True
    # two installed, none enabled: which one is not guessed
    assert cli("install", bundles.v2, "--home", home).status == 0
    two = cli("doctor", "example", "--home", home)
    assert_refused(two, "install.not-enabled")
    assert "no version is enabled for" in two.stderr and "(0.1.0, 0.2.0)" in two.stderr
    assert "--installed-version VERSION" in two.stderr
    # `check` (what a host runs before loading) still wants the enabled one
    assert_refused(cli("check", "example", "--home", home), "install.not-enabled")


@pytest.mark.parametrize(("files", "sign"), [
    ({".claude-plugin/README.md": "a plugin\n"}, ".claude-plugin/"),
    ({".mcp.json": "{}\n"}, ".mcp.json"),
    ({".muse-plugin/notes.txt": "x\n"}, ".muse-plugin/"),
])
def test_a_harness_plugin_without_its_manifest_gets_harness_words(
        tmp_path: Path, files: dict[str, str], sign: str) -> None:
    plugin = tmp_path / "plugin"
    for name, text in files.items():
        (plugin / name).parent.mkdir(parents=True, exist_ok=True)
        (plugin / name).write_text(text)
    result = cli("build", plugin, "--out", tmp_path / "out")
    assert_refused(result, "harness.manifest-missing")
    assert f"holds {sign} but no .claude-plugin/plugin.json" in result.stderr
    assert "horon-release.toml: not found" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_empty_directory_still_speaks_of_the_declaration(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert_refused(cli("build", tmp_path / "plain"), "declaration.missing")


def test_a_name_that_is_not_kebab_case_gets_a_rename_hint(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", manifest={"name": "Bad_Name",
                                                             "version": "1.0.0"})
    built = cli("build", workspace, "--out", tmp_path / "out")
    assert built.status == 0, built.stderr  # the host accepts the name; so does the build
    assert built.warnings == ["harness.name-style"], built.stderr
    assert "name 'Bad_Name' is not kebab-case (the host accepts it)" in built.stderr
    assert "hint: Rename it 'bad-name'" in built.stderr
    assert "manifest-unknown-field" not in built.stderr and "Remove the field" not in built.stderr
    strict = cli("build", workspace, "--out", tmp_path / "strict", "--strict")
    assert_refused(strict, "harness.name-style")


@pytest.mark.parametrize(("name", "suggested"), [
    ("Bad_Name", "bad-name"), ("GuardKit", "guard-kit"), ("my.tool v2", "my-tool-v2"),
    ("HTTPTools", "httptools")])
def test_the_suggested_name_is_kebab_case(name: str, suggested: str) -> None:
    from horon_bundle.model.harness.manifest import kebab_case  # noqa: PLC0415

    assert kebab_case(name) == suggested


def test_a_host_is_named_once_per_message(tmp_path: Path) -> None:
    """--host muse-code names a shipped profile: the message says "broken on muse-code@…"
    once, not once for the shipped list and once for the chosen host."""
    workspace = write_plugin(tmp_path / "plugin")
    write_json(workspace / ".mcp.json", {"mcpServers": {"notes": {
        "command": "npx", "args": ["notes-server"], "env": {"API": "${NOTES_API_KEY}"}}}})
    result = cli("build", workspace, "--out", tmp_path / "out", "--host", "muse-code")
    assert_refused(result, "hook.env-credential")
    [line] = [line for line in result.stderr.splitlines() if line.startswith("ERROR ")]
    assert line.count("muse-code@") == line.count("broken on muse-code@") >= 1, line
    assert "muse-code@0.2.1, muse-code@0.2.1" not in line


def test_a_zip_mode_without_file_type_bits_is_said_plainly(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    built = cli("build", workspace, "--out", tmp_path / "out")
    assert built.status == 0, built.stderr
    archive = tmp_path / "out" / ZIP_NAME
    rewritten = tmp_path / ZIP_NAME
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(rewritten, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "commands/review.md":
                info.external_attr = 0o644 << 16  # permission bits, no S_IFREG
            target.writestr(info, data)
    before = tree_snapshot(tmp_path / "out")
    result = cli("verify", rewritten, "--json")
    assert result.status == 1
    messages = [f["message"] for check in result.json()["checks"] for f in check["findings"]
                if f["code"] == "layout.file-type"]
    assert messages == [f"{ZIP_NAME}: entry 'commands/review.md': mode 644 has no file-type "
                        "bits, so the entry is not marked a regular file (expected 100644)"], \
        messages
    assert "not a regular file (mode 644)" not in json.dumps(result.json())
    assert tree_snapshot(tmp_path / "out") == before
