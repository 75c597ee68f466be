"""A `file://` store with `HORON_PUBLISH_PUBLIC_URL` serves a Claude Code marketplace
(publish/destinations/store_marketplace.py): `.claude-plugin/marketplace.json` at its root,
every plugin an `archive` source under the public address with its zip's SHA-256, the latest
version that is not yanked, written after the commits, all or nothing, and never rewritten
with the same bytes. The host's own verdict on it is in test_marketplace_host.py."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from horon_bundle.core.checkpoint import CHECKPOINT
from tests.conftest import BuiltExample
from tests.harness_support import built_marketplace, built_zip, write_json
from tests.helpers import REPO, assert_refused, cli, tree_snapshot
from tests.publish_support import make_dist, publish_env

BASE = "https://plugins.example.com/horon"
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"


@pytest.fixture(name="market", scope="module")
def market_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_marketplace(tmp_path_factory.mktemp("market"))


def _dist(dist: Path, *outs: Path) -> Path:
    """A release directory holding everything the builds in `outs` wrote but their release
    statements: assembled by hand, it publishes every archive (tests/sign/ test the rule)."""
    dist.mkdir(parents=True, exist_ok=True)
    for out in outs:
        for path in out.iterdir():
            if not path.name.endswith(".intoto.jsonl"):
                shutil.copy2(path, dist / path.name)
    return dist


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    return store


def _env(store: Path, url: str = BASE + "/") -> dict[str, str]:
    return {**publish_env(f"file://{store}"), "HORON_PUBLISH_PUBLIC_URL": url}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listed(store: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((store / MARKETPLACE).read_text())
    return {p["name"]: p for p in document["plugins"]}


def _version(root: Path, version: str, name: str = "guard-kit", *, muse: bool = False) -> Path:
    """A built harness zip of `name` at `version` (its build directory)."""
    return built_zip(root, manifest={"name": name, "version": version,
                                     "description": f"{name} {version}"}, muse=muse).parent


def test_a_store_with_a_public_url_serves_a_marketplace_of_archive_sources(
        tmp_path: Path, market: Path) -> None:
    dist, store = _dist(tmp_path / "dist", market), _store(tmp_path)
    result = cli("publish", dist, "--json", env=_env(store))
    assert result.status == 0, result.stderr
    path = store / MARKETPLACE
    data = path.read_bytes()
    zips = {name: dist / f"{name}-{version}.zip" for name, version in
            (("guard-kit", "1.2.0"), ("bare", "0.3.0"))}
    assert json.loads(data) == {
        "name": "team-tools", "owner": {"name": "plugins.example.com"},
        "description": "Harness bundles published by horon-bundle: each plugin is a zip whose "
                       "SHA-256 Claude Code checks before it installs anything.",
        "plugins": [
            {"name": "bare", "version": "0.3.0", "source": {
                "source": "archive", "sha256": _sha(zips["bare"]),
                "url": f"{BASE}/blobs/sha256/{_sha(zips['bare'])}"}},
            {"name": "guard-kit", "version": "1.2.0", "description": "Guards for agents",
             "source": {"source": "archive", "sha256": _sha(zips["guard-kit"]),
                        "url": f"{BASE}/blobs/sha256/{_sha(zips['guard-kit'])}"}}]}
    assert data == (json.dumps(json.loads(data), sort_keys=True, indent=2) + "\n").encode()
    for name, archive in zips.items():  # each URL names the blob holding exactly the zip
        blob = store / "blobs" / "sha256" / _listed(store)[name]["source"]["sha256"]
        assert blob.read_bytes() == archive.read_bytes()
    receipt = result.json()
    assert receipt["marketplace"] == {
        "name": "team-tools", "status": "written", "plugins": 2, "sha256": _sha(path),
        "location": f"file://{path}", "url": f"{BASE}/.claude-plugin/marketplace.json"}
    assert "marketplace written team-tools (2 plugins)" in result.stderr
    for schema, document in (("hosted-marketplace", json.loads(data)),
                             ("publish-receipt", receipt)):
        _valid(schema, document)
    # the same release again: nothing is written, the file is not even replaced
    before, identity = tree_snapshot(store), path.stat()
    again = cli("publish", dist, "--json", env=_env(store))
    assert again.status == 0, again.stderr
    assert again.json()["marketplace"]["status"] == "unchanged"
    assert tree_snapshot(store) == before
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (identity.st_ino,
                                                              identity.st_mtime_ns)


def _valid(schema: str, document: object) -> None:
    loaded = json.loads((REPO / "docs" / "schemas" / f"{schema}.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(loaded).iter_errors(document)]
    assert not errors, errors


def test_without_a_public_url_nothing_changes(tmp_path: Path, market: Path) -> None:
    dist, store = _dist(tmp_path / "dist", market), _store(tmp_path)
    result = cli("publish", dist, "--json", env=publish_env(f"file://{store}"))
    assert result.status == 0, result.stderr
    assert "marketplace" not in result.json()
    assert sorted(p.name for p in store.iterdir()) == [".tmp", "blobs", "harness",
                                                       "horon-store.json"]
    assert list((store / ".tmp").iterdir()) == []


@pytest.mark.slow
def test_the_latest_version_that_is_not_yanked_is_listed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    versions = ("1.2.0", "1.10.0", "1.10.0-rc.1", "1.9.0")
    for version in versions:  # one run each, in this order
        result = cli("publish", _dist(tmp_path / f"dist-{version}",
                                      _version(tmp_path / version, version)),
                     env=_env(store))
        assert result.status == 0, result.stderr
    assert _listed(store)["guard-kit"]["version"] == "1.10.0"  # not 1.9.0: by precedence
    assert _listed(store)["guard-kit"]["description"] == "guard-kit 1.10.0"
    # a yank mark (docs/publishing.md: harness yank marks are honoured) takes it out at the
    # next run, even one that publishes nothing new
    write_json(store / "harness" / "yanks" / "guard-kit" / "1.10.0.json", {"reason": "bad"})
    again = cli("publish", tmp_path / "dist-1.2.0", "--json", env=_env(store))
    assert again.status == 0, again.stderr
    assert again.json()["marketplace"]["status"] == "written"
    assert _listed(store)["guard-kit"]["version"] == "1.10.0-rc.1"
    for version in ("1.10.0-rc.1", "1.9.0", "1.2.0"):
        write_json(store / "harness" / "yanks" / "guard-kit" / f"{version}.json", {})
    other = _dist(tmp_path / "dist-other", _version(tmp_path / "other", "1.0.0", "notes-kit"))
    assert cli("publish", other, env=_env(store)).status == 0
    assert set(_listed(store)) == {"notes-kit"}  # every version withdrawn: listed no more


@pytest.mark.cargo
def test_a_yank_rewrites_the_marketplace(tmp_path: Path, example_release: BuiltExample,
                                         market: Path) -> None:
    dist = _dist(make_dist(tmp_path / "dist", example_release.archive), market)
    store = _store(tmp_path)
    assert cli("publish", dist, env=_env(store)).status == 0
    write_json(store / "harness" / "yanks" / "bare" / "0.3.0.json", {})
    yanked = cli("yank", "example", "0.1.0", "--reason", "withdrawn", env=_env(store))
    assert yanked.status == 0, yanked.stderr
    assert "marketplace written team-tools (1 plugin)" in yanked.stdout
    assert set(_listed(store)) == {"guard-kit"}


def test_a_single_plugin_joins_the_marketplace_the_store_serves(tmp_path: Path,
                                                                market: Path) -> None:
    store = _store(tmp_path)
    assert cli("publish", _dist(tmp_path / "dist", market), env=_env(store)).status == 0
    alone = _dist(tmp_path / "alone", _version(tmp_path / "next", "1.3.0"))
    result = cli("publish", alone, env=_env(store))
    assert result.status == 0, result.stderr
    assert json.loads((store / MARKETPLACE).read_text())["name"] == "team-tools"
    assert {n: p["version"] for n, p in _listed(store).items()} == {"bare": "0.3.0",
                                                                   "guard-kit": "1.3.0"}


def test_a_first_single_plugin_names_the_marketplace(tmp_path: Path) -> None:
    store = _store(tmp_path)
    dist = _dist(tmp_path / "dist", _version(tmp_path / "one", "1.0.0", name="notes-kit"))
    assert cli("publish", dist, env=_env(store, "https://Plugins.Example.com")).status == 0
    document = json.loads((store / MARKETPLACE).read_text())
    assert (document["name"], document["owner"]) == ("notes-kit",
                                                     {"name": "plugins.example.com"})
    assert _listed(store)["notes-kit"]["source"]["url"].startswith(
        "https://plugins.example.com/blobs/sha256/")


def _refused_cleanly(dist: Path, store: Path, env: dict[str, str], code: str, *,
                     status: int = 1) -> str:
    before = tree_snapshot(store)
    result = cli("publish", dist, env=env)
    assert_refused(result, code, status=status)
    assert tree_snapshot(store) == before
    assert not (dist / "publish-receipt.json").exists()
    return result.stderr


@pytest.mark.parametrize(("case", "expected"), [
    ("reserved-marketplace", "marketplace name 'claude-plugins' reads as an official"),
    ("reserved-plugin", "claude-guard: the marketplace would list it"),
    ("two-plugins-no-index", "holds bare, guard-kit and no marketplace index"),
    ("another-marketplace", "the store serves the marketplace 'notes-kit'"),
])
def test_a_marketplace_claude_code_would_refuse_publishes_nothing(
        tmp_path: Path, market: Path, case: str, expected: str) -> None:
    store = _store(tmp_path)
    if case == "reserved-marketplace":
        dist = _dist(tmp_path / "dist", built_marketplace(tmp_path / "m", "claude-plugins"))
    elif case == "reserved-plugin":
        # a Muse Code plugin may be called so (build refuses it in Claude Code's layout)
        dist = _dist(tmp_path / "dist", _version(tmp_path / "p", "1.0.0", name="claude-guard",
                                                 muse=True))
    elif case == "two-plugins-no-index":
        dist = _dist(tmp_path / "dist", _version(tmp_path / "a", "1.0.0"),
                     _version(tmp_path / "b", "1.0.0", name="bare"))
    else:  # the store serves notes-kit's marketplace; this release is team-tools'
        first = _dist(tmp_path / "first", _version(tmp_path / "n", "1.0.0", name="notes-kit"))
        assert cli("publish", first, env=_env(store)).status == 0
        dist = _dist(tmp_path / "dist", market)
    stderr = _refused_cleanly(dist, store, _env(store), "publish.marketplace")
    assert expected in stderr


@pytest.mark.parametrize(("url", "expected"), [
    ("http://plugins.example.com", "scheme 'http'"),
    ("https://user:secret@plugins.example.com", "user information"),
    ("https://plugins.example.com/x?token=1", "query or fragment"),
    ("https://localhost:8443/", "a local or cloud metadata name"),
    ("https://127.0.0.1/", "loopback"),
])
def test_a_public_url_claude_code_cannot_use_is_refused(tmp_path: Path, market: Path, url: str,
                                                        expected: str) -> None:
    dist, store = _dist(tmp_path / "dist", market), _store(tmp_path)
    stderr = _refused_cleanly(dist, store, _env(store, url), "publish.public-url", status=3)
    assert expected in stderr and "secret" not in stderr


def test_a_public_url_for_a_registry_is_refused_before_it_is_contacted(market: Path,
                                                                      tmp_path: Path) -> None:
    dist = _dist(tmp_path / "dist", market)
    result = cli("publish", dist, env={**publish_env("oci://127.0.0.1:9/horon"),
                                       "HORON_PUBLISH_PUBLIC_URL": BASE})
    assert_refused(result, "publish.public-url", status=3)
    assert "not a file:// store" in result.stderr


def test_a_dry_run_writes_no_marketplace(tmp_path: Path, market: Path) -> None:
    dist, store = _dist(tmp_path / "dist", market), _store(tmp_path)
    result = cli("publish", dist, "--dry-run", "--json", env=_env(store))
    assert result.status == 0, result.stderr
    assert "marketplace" not in result.json()
    assert list(store.iterdir()) == []


@pytest.mark.process
@pytest.mark.slow
def test_a_publish_killed_before_the_marketplace_is_replaced_is_completed_by_a_rerun(
        tmp_path: Path, market: Path) -> None:
    dist, store = _dist(tmp_path / "dist", market), _store(tmp_path)
    killed = cli("publish", dist, env={**_env(store), CHECKPOINT: "kill:publish.marketplace"})
    assert killed.status == -signal.SIGKILL, killed.stderr
    assert not (store / MARKETPLACE).exists()  # the entries are committed, nothing lists them
    assert sorted(p.name for p in (store / "harness" / "index").iterdir()) == ["bare",
                                                                             "guard-kit"]
    again = cli("publish", dist, "--json", env=_env(store))
    assert again.status == 0, again.stderr
    assert {b["status"] for b in again.json()["bundles"]} == {"already-published"}
    assert again.json()["marketplace"]["status"] == "written"
    assert set(_listed(store)) == {"bare", "guard-kit"}
    assert [p.name for p in (store / ".tmp").iterdir()] == ["marketplace.lock"]
