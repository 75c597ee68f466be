"""Building harness bundles: deterministic zips, catalogue from the files, refs, kinds."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

from tests.harness_support import (
    PLUGIN_NAME,
    PLUGIN_VERSION,
    ZIP_NAME,
    command_hook,
    commit_all,
    edit_json,
    git,
    hooks_document,
    write_json,
    write_plugin,
)
from tests.helpers import assert_refused, cli, tree_snapshot


def _build(workspace: Path, out: Path, *args: str) -> dict[str, object]:
    result = cli("build", workspace, "--out", out, "--json", *args)
    assert result.status == 0, result.stderr
    assert "Traceback" not in result.stderr
    document: dict[str, object] = result.json()
    return document


def test_clean_plugin_builds_the_same_bytes_twice_and_from_two_checkouts(tmp_path: Path) -> None:
    first = write_plugin(tmp_path / "checkout-a" / "guard-kit")
    revision = commit_all(first)
    second = tmp_path / "elsewhere" / "deeper" / "clone"
    second.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(first), str(second)], check=True)
    digests = []
    for index, workspace in enumerate((first, first, second)):
        out = tmp_path / f"out-{index}"
        document = _build(workspace, out)
        bundles = document["bundles"]
        assert isinstance(bundles, list) and len(bundles) == 1
        archive = out / ZIP_NAME
        digests.append(hashlib.sha256(archive.read_bytes()).hexdigest())
        assert bundles[0]["sha256"] == digests[-1]
        ref = json.loads((out / f"{ZIP_NAME}.ref.json").read_text())
        assert ref == {"name": PLUGIN_NAME, "sha256": digests[-1]}
    assert len(set(digests)) == 1, "the zip is not a pure function of the source"
    with zipfile.ZipFile(tmp_path / "out-0" / ZIP_NAME) as bundle:
        statement = json.loads(bundle.read("provenance.json"))
        parameters = statement["predicate"]["buildDefinition"]["externalParameters"]
        assert parameters["source"] == {"revision": revision, "dirty": False}
        assert (statement["predicate"]["buildDefinition"]["buildType"]
                == "https://horon.dev/horon-bundle/build-types/harness-zip/v1")


def test_catalogue_equals_the_files(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    _build(workspace, out)
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        names = archive.namelist()
        catalogue = json.loads(archive.read("catalogue.json"))
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in archive.infolist()}
        sums = archive.read("SHA256SUMS").decode()
    assert catalogue["plugin"] == {"name": PLUGIN_NAME, "version": PLUGIN_VERSION,
                                   "description": "Guards for agents",
                                   "manifests": [".claude-plugin/plugin.json"],
                                   "hosts": ["claude-code"]}
    assert catalogue["skills"] == [{
        "id": "release-notes", "path": "skills/release-notes/SKILL.md",
        "frontmatter": {"name": "Release Notes Writer",
                        "description": "Writes release notes from the changelog"},
        "frontmatter_read_as": "yaml"}]
    assert [c["id"] for c in catalogue["commands"]] == ["review"]  # the stem: no name given
    assert catalogue["commands"][0]["frontmatter"]["allowed-tools"] == "Bash(git diff:*)"
    assert [a["id"] for a in catalogue["agents"]] == ["reviewer"]
    assert catalogue["hooks"] == [
        {"event": "PreToolUse", "matcher": "Bash", "type": "command", "source": "hooks/hooks.json",
         "command": '"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"'},
        {"event": "SessionStart", "matcher": None, "type": "command",
         "source": "hooks/hooks.json",
         "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/start.py\""}]
    assert catalogue["mcp_servers"] == [{"name": "notes", "source": ".mcp.json", "type": "stdio",
                                         "command": "${CLAUDE_PLUGIN_ROOT}/servers/notes",
                                         "args": ["--stdio"]}]
    assert catalogue["events"] == ["PreToolUse", "SessionStart"]
    plugin_files = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*")
                          if p.is_file())
    assert sorted(set(names) - {"SHA256SUMS", "catalogue.json", "provenance.json"}) == plugin_files
    assert "skills/release-notes/references/style.md" in names  # nested skill resources
    assert modes["hooks/guard.sh"] == 0o755 and modes["servers/notes"] == 0o755
    assert modes["hooks/hooks.json"] == 0o644
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        archive.extractall(unpacked)  # our own, just verified archive
    checked = subprocess.run(["sha256sum", "--strict", "-c", "SHA256SUMS"], cwd=unpacked,
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert sums.count("\n") == len(names) - 1


def test_the_output_directory_inside_the_plugin_is_not_bundled(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    commit_all(workspace)
    first = _build(workspace, workspace / "dist")
    second = _build(workspace, workspace / "dist")
    assert first["bundles"] == second["bundles"]  # dist/ neither bundled nor making it dirty
    with zipfile.ZipFile(workspace / "dist" / ZIP_NAME) as archive:
        assert not [n for n in archive.namelist() if n.startswith("dist/")]
        statement = json.loads(archive.read("provenance.json"))
    source = statement["predicate"]["buildDefinition"]["externalParameters"]["source"]
    assert source["dirty"] is False


def test_an_output_directory_that_would_take_plugin_files_with_it_is_refused(
        tmp_path: Path) -> None:
    """The output directory is left out of the zip: as the plugin directory (or one above
    it) it took everything ('no plugin.json'); inside skills/ it silently dropped the skill
    from a zip that verified. Both are refused before anything is written, in git or not."""
    workspace = write_plugin(tmp_path / "plugin")
    for git_checkout in (False, True):
        if git_checkout:
            commit_all(workspace)
        for out in (workspace, tmp_path, workspace / "skills",
                    workspace / "skills" / "release-notes" / "out",
                    workspace / ".claude-plugin", workspace / "commands", workspace / "hooks"):
            before = tree_snapshot(tmp_path)
            result = cli("build", workspace, "--out", out)
            assert_refused(result, "output.over-plugin")
            assert "would be left out of the bundle" in result.stderr
            assert tree_snapshot(tmp_path) == before


def test_git_ignored_files_stay_out_and_a_change_raises_the_dirty_flag(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / ".gitignore").write_text("*.log\n")
    commit_all(workspace)
    (workspace / "debug.log").write_text("noise\n")
    (workspace / "commands" / "review.md").write_text("---\ndescription: changed\n---\n")
    out = tmp_path / "out"
    _build(workspace, out)
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        assert "debug.log" not in archive.namelist()
        statement = json.loads(archive.read("provenance.json"))
    assert statement["predicate"]["buildDefinition"]["externalParameters"]["source"]["dirty"]


def test_a_muse_plugin_builds_and_names_its_host(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", muse=True)
    out = tmp_path / "out"
    _build(workspace, out)
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        catalogue = json.loads(archive.read("catalogue.json"))
    assert catalogue["plugin"]["hosts"] == ["muse-code"]
    assert cli("verify", out / ZIP_NAME, "--host", "muse-code").status == 0


def test_native_and_harness_in_one_workspace_is_ambiguous(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "horon-release.toml").write_text("schema = 1\n")
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out)
    assert_refused(result, "harness.kind-ambiguous", status=2)
    assert tree_snapshot(out) == {}
    assert cli("build", workspace, "--out", out, "--kind", "harness").status == 0
    native = cli("build", workspace, "--out", tmp_path / "native", "--kind", "native")
    assert native.status != 0 and "harness" not in " ".join(native.codes)


def test_refusals_write_nothing(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin", hooks=hooks_document(
        PreToolUse=[command_hook("${CLAUDE_PLUGIN_ROOT}/hooks/absent.sh")]))
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out)
    assert_refused(result, "hook.command-missing")
    assert "hooks/absent.sh" in result.stderr
    assert not out.exists()


def test_reserved_names_and_unsafe_links_are_refused(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "catalogue.json").write_text("{}\n")
    assert_refused(cli("build", workspace, "--out", tmp_path / "a"), "harness.reserved-path")
    (workspace / "catalogue.json").unlink()
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours\n")
    (workspace / "skills" / "leak.txt").symlink_to(outside)
    result = cli("build", workspace, "--out", tmp_path / "b")
    assert_refused(result, "harness.path-unsafe")
    assert not (tmp_path / "b").exists()


def test_a_link_inside_the_root_is_bundled_as_the_file_it_names(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "skills" / "release-notes" / "references" / "again.md").symlink_to(
        workspace / "commands" / "review.md")
    out = tmp_path / "out"
    _build(workspace, out)
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        linked = archive.read("skills/release-notes/references/again.md")
    assert linked == (workspace / "commands" / "review.md").read_bytes()


def test_marketplace_builds_every_local_plugin_and_pins_each_digest(tmp_path: Path) -> None:
    repository = tmp_path / "market"
    write_plugin(repository / "plugins" / "guard-kit")
    bare = repository / "plugins" / "bare"  # no manifest: its metadata is its entry's
    (bare / "commands").mkdir(parents=True)
    (bare / "commands" / "hello.md").write_text("---\ndescription: hi\n---\nhello\n")
    edit_json(repository / "plugins" / "guard-kit" / ".claude-plugin" / "plugin.json",
              lambda d: d.update(version="1.2.0"))
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": "team-tools", "owner": {"name": "Team"},
        "plugins": [
            {"name": "guard-kit", "source": "./plugins/guard-kit", "version": "1.0.0"},
            {"name": "bare", "source": "./plugins/bare", "version": "0.3.0",
             "description": "listed only"},
            {"name": "remote-one", "source": {"source": "github", "repo": "example/remote"}},
            {"name": "npm-one", "source": {"source": "npm", "package": "@example/x"}},
        ]})
    out = tmp_path / "out"
    result = cli("build", repository, "--out", out, "--json")
    assert result.status == 0, result.stderr
    document = result.json()
    assert document["skipped"] == ["remote-one", "npm-one"]
    codes = [w["code"] for w in document["warnings"]]
    assert codes.count("marketplace.skipped") == 2 and "marketplace.version" in codes
    assert "remote-one" in result.stderr and "npm-one" in result.stderr
    index = json.loads((out / "team-tools.index.json").read_text())
    pinned = {p["name"]: (p["version"], p["sha256"]) for p in index["plugins"]}
    for name, version in (("guard-kit", "1.2.0"), ("bare", "0.3.0")):  # plugin.json wins
        archive = out / f"{name}-{version}.zip"
        assert pinned[name] == (version, hashlib.sha256(archive.read_bytes()).hexdigest())
        assert cli("verify", archive).status == 0
    assert [s["name"] for s in index["skipped"]] == ["npm-one", "remote-one"]


def test_a_refused_marketplace_plugin_stops_the_whole_run(tmp_path: Path) -> None:
    repository = tmp_path / "market"
    write_plugin(repository / "plugins" / "good")
    write_plugin(repository / "plugins" / "bad", manifest={"name": "bad", "version": "1.0.0"},
                 hooks=hooks_document(Stop=[command_hook("${CLAUDE_PLUGIN_ROOT}/gone.sh")]))
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": "m", "owner": {"name": "x"}, "plugins": [
            {"name": PLUGIN_NAME, "source": "./plugins/good"},
            {"name": "bad", "source": "./plugins/bad"},
            {"name": "ghost", "source": "./plugins/ghost"}]})
    out = tmp_path / "out"
    result = cli("build", repository, "--out", out)
    assert_refused(result, "hook.command-missing")
    assert "marketplace.invalid" in result.codes  # ./plugins/ghost is no directory
    assert not out.exists()


def test_build_walk_up_hook_finds_harness_manifests(tmp_path: Path) -> None:
    from horon_bundle.build.kind import find_workspace_root  # noqa: PLC0415

    workspace = write_plugin(tmp_path / "plugin")
    assert find_workspace_root(workspace / "skills" / "release-notes") == workspace.resolve()
    shutil.rmtree(workspace / ".claude-plugin")
    git(tmp_path, "init", "-q")
    assert find_workspace_root(workspace / "skills") is None


def test_native_build_options_are_refused_for_a_harness_workspace(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    for extra in (("--target", "x86_64-unknown-linux-gnu"), ("--channel", "qa"),
                  ("--plugin", "x")):
        result = cli("build", workspace, "--out", tmp_path / "out", *extra)
        assert_refused(result, "harness.unsupported", status=2)
        assert extra[0] in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_unpacked_bundle_verifies_like_its_zip(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    _build(workspace, out)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        archive.extractall(unpacked)  # our own, just verified archive
    (unpacked / "hooks" / "guard.sh").chmod(0o755)
    (unpacked / "servers" / "notes").chmod(0o755)
    result = cli("verify", unpacked, "--json")
    assert result.status == 0, result.stderr
    assert result.json()["kind"] == "harness"
    (unpacked / "commands" / "extra.md").write_text("smuggled\n")
    assert_refused(cli("verify", unpacked), "checksum.unlisted")


def test_a_link_cycle_inside_the_root_is_refused_not_followed_forever(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    (workspace / "skills" / "loop").symlink_to(workspace / "skills")
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "harness.link-loop")
    assert "cycle" in result.stderr


def test_a_number_beyond_a_double_is_refused_not_read_as_infinity(tmp_path: Path) -> None:
    """Plugin JSON admits any number (a host's JSON.parse does), but `1e400` is Infinity to
    one reader and an error to another: a hook timeout of 1e400 would be a hook without any
    timeout. Refused with its file named, nothing written."""
    workspace = write_plugin(tmp_path / "plugin")
    hooks = workspace / "hooks" / "hooks.json"
    text = hooks.read_text()
    assert '"timeout": 10' in text
    hooks.write_text(text.replace('"timeout": 10', '"timeout": 1e400'))
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out)
    assert_refused(result, "json.nonfinite")
    assert "hooks/hooks.json: number 1e400 is beyond a double's range" in result.stderr
    assert not out.exists()
