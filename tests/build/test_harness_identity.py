"""A plugin without plugin.json, or without a version, builds as Claude Code loads it: named
after its directory (or by its marketplace entry), versioned by the entry, else by its content
(`0.0.0+sha.` and 12 hex digits of the SHA-256 of its files' SHA256SUMS); the zip verifies,
installs, fetches and publishes like any other."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from horon_bundle.model import checksums
from horon_bundle.model.harness.manifest import content_version
from tests.harness_support import write_json, write_plugin
from tests.helpers import assert_refused, cli
from tests.publish_support import publish_env

CONTENT_VERSION = re.compile(r"0\.0\.0\+sha\.[0-9a-f]{12}")


def _manifestless(root: Path) -> Path:
    """A plugin of a command, an agent and a hook, and no .claude-plugin/ at all."""
    (root / "commands").mkdir(parents=True)
    (root / "commands" / "hello.md").write_text("---\ndescription: Say hello\n---\nHello.\n")
    (root / "agents").mkdir()
    (root / "agents" / "helper.md").write_text("---\nname: helper\ndescription: Helps\n---\nx\n")
    write_json(root / "hooks" / "hooks.json", {"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/start.py"'}]}]}})
    (root / "hooks" / "start.py").write_text("print('{}')\n")
    return root


def _files_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()}


def _built(out: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    [archive] = sorted(out.glob("*.zip"))
    with zipfile.ZipFile(archive) as opened:
        catalogue = json.loads(opened.read("catalogue.json"))
        statement = json.loads(opened.read("provenance.json"))
    return archive, catalogue, statement["predicate"]["buildDefinition"]


def test_a_plugin_without_plugin_json_is_named_after_its_directory(tmp_path: Path) -> None:
    plugin = _manifestless(tmp_path / "hello-kit")
    out = tmp_path / "out"
    built = cli("build", plugin, "--out", out, "--json")
    assert built.status == 0, built.stderr
    archive, catalogue, definition = _built(out)
    version = content_version(_files_digests(plugin))
    assert CONTENT_VERSION.fullmatch(version)
    digest = hashlib.sha256(checksums.render(_files_digests(plugin))).hexdigest()
    assert version == f"0.0.0+sha.{digest[:12]}"
    assert archive.name == f"hello-kit-{version}.zip"
    assert catalogue["plugin"] == {"name": "hello-kit", "version": version, "description": None,
                                   "manifests": [], "hosts": []}
    assert [a["id"] for a in catalogue["agents"]] == ["helper"]
    assert definition["internalParameters"]["version_from"] == "content"
    for host in ("claude-code@2.1.332", "muse-code"):
        verified = cli("verify", archive, "--host", host, "--strict")
        assert verified.status == 0, verified.stderr
    again = cli("build", plugin, "--out", tmp_path / "again")
    assert again.status == 0 and (tmp_path / "again" / archive.name).read_bytes() == \
        archive.read_bytes()
    (plugin / "commands" / "hello.md").write_text("---\ndescription: Say hi\n---\nHi.\n")
    changed = cli("build", plugin, "--out", tmp_path / "changed")
    assert changed.status == 0, changed.stderr
    assert _built(tmp_path / "changed")[1]["plugin"]["version"] != version


def test_a_directory_name_the_host_refuses_is_refused(tmp_path: Path) -> None:
    for name, code in (("claude-helper", "harness.name-reserved"),
                       ("my kit", "harness.manifest-value")):
        plugin = _manifestless(tmp_path / name)
        out = tmp_path / f"out-{len(name)}"
        assert_refused(cli("build", plugin, "--out", out), code)
        assert not out.exists()


def test_a_plugin_json_without_a_version_is_versioned_by_its_content(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path / "plugin", manifest={"name": "nov", "description": "d"})
    out = tmp_path / "out"
    built = cli("build", plugin, "--out", out)
    assert built.status == 0, built.stderr
    archive, catalogue, definition = _built(out)
    version = content_version(_files_digests(plugin))
    assert archive.name == f"nov-{version}.zip" and catalogue["plugin"]["version"] == version
    assert definition["internalParameters"]["version_from"] == "content"
    assert cli("verify", archive, "--host", "claude-code@2.1.332").status == 0


def test_a_marketplace_gives_the_version_or_the_content_does(tmp_path: Path) -> None:
    repository = tmp_path / "market"
    _manifestless(repository / "plugins" / "hello")
    _manifestless(repository / "plugins" / "unversioned")
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": "team-tools", "owner": {"name": "Team"}, "plugins": [
            {"name": "hello-kit", "source": "./plugins/hello", "version": "2.0.0",
             "description": "from the entry"},
            {"name": "plain-kit", "source": "./plugins/unversioned"}]})
    out = tmp_path / "out"
    built = cli("build", repository, "--out", out)
    assert built.status == 0, built.stderr
    index = json.loads((out / "team-tools.index.json").read_text())
    versions = {p["name"]: p["version"] for p in index["plugins"]}
    assert versions["hello-kit"] == "2.0.0"
    assert versions["plain-kit"] == content_version(
        _files_digests(repository / "plugins" / "unversioned"))
    for plugin in index["plugins"]:
        verified = cli("verify", out / plugin["zip"], "--host", "claude-code@2.1.332")
        assert verified.status == 0, verified.stderr


def test_a_content_version_installs_fetches_and_publishes(tmp_path: Path) -> None:
    plugin = _manifestless(tmp_path / "hello-kit")
    out = tmp_path / "dist"
    assert cli("build", plugin, "--out", out).status == 0
    [archive] = sorted(out.glob("*.zip"))
    home = tmp_path / "home"
    installed = cli("install", archive, "--home", home)
    assert installed.status == 0, installed.stderr
    listed = cli("list", "--catalogue", "--home", home)
    assert listed.status == 0 and "hello-kit 0.0.0+sha." in listed.stdout
    fetched = cli("fetch", f"{archive}.ref.json", "--into", tmp_path / "sandbox", "--home", home)
    assert fetched.status == 0, fetched.stderr
    assert (tmp_path / "sandbox" / "commands" / "hello.md").is_file()
    checked = cli("check", "hello-kit", "--home", home)
    assert checked.status == 0, checked.stderr
    store = tmp_path / "store"
    store.mkdir()
    published = cli("publish", out, "--json", env=publish_env(f"file://{store}"))
    assert published.status == 0, published.stderr
    [bundle] = published.json()["bundles"]
    assert (bundle["id"], bundle["status"]) == ("hello-kit", "published")
    version = archive.name.removeprefix("hello-kit-").removesuffix(".zip")
    assert (store / "harness" / "index" / "hello-kit" / f"{version}.json").is_file()
