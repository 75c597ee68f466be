"""The host as oracle for the marketplace a store serves: the pinned Claude Code CLI
(tests/claude_host.py) validates it, adds it, installs from it over HTTPS, and refuses a zip
whose bytes changed after publishing — its own `archive` integrity check on the digest
horon-bundle pinned. The server runs on loopback in namespaces of its own and every host
command joins them (tests/named_https.py): no other address exists for it."""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest

from tests.claude_host import ClaudeHost
from tests.harness_support import built_marketplace
from tests.helpers import cli
from tests.named_https import serve_directory
from tests.publish_support import publish_env

NO_NETWORK = ["unshare", "--user", "--map-root-user", "--net", "--"]
MARKET = "team-tools"


@pytest.fixture(name="market", scope="module")
def market_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_marketplace(tmp_path_factory.mktemp("market"), MARKET)


def _publish(market: Path, store: Path, public_url: str) -> None:
    store.mkdir(exist_ok=True)
    env = {**publish_env(f"file://{store}"), "HORON_PUBLISH_PUBLIC_URL": public_url}
    result = cli("publish", market, env=env)
    assert result.status == 0, result.stderr


@pytest.mark.process
@pytest.mark.slow
def test_the_host_validates_the_marketplace_a_store_serves(tmp_path: Path, market: Path,
                                                          claude_host: ClaudeHost) -> None:
    store = tmp_path / "store"
    _publish(market, store, "https://plugins.example.com/horon")
    ran = claude_host.run("plugin", "validate", store, "--json", "--strict",
                          home=tmp_path / "home", prefix=NO_NETWORK)
    report = ran.json()
    assert isinstance(report, dict)
    assert (ran.status, report["success"]) == (0, True), ran.stdout
    assert report["manifest"]["type"] == "marketplace"
    assert (report["manifest"]["errors"], report["manifest"]["warnings"]) == ([], [])


def _files(root: Path) -> dict[str, tuple[bytes, bool]]:
    """Relative path -> (bytes, executable) of every file under `root`."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
            for p in sorted(root.rglob("*")) if p.is_file()}


def _entries(archive: Path) -> dict[str, tuple[bytes, bool]]:
    with zipfile.ZipFile(archive) as opened:
        return {i.filename: (opened.read(i), bool(stat.S_IMODE(i.external_attr >> 16) & 0o100))
                for i in opened.infolist()}


@pytest.mark.process
@pytest.mark.slow
def test_the_host_installs_by_digest_from_the_store_and_refuses_a_changed_zip(
        tmp_path: Path, market: Path, claude_host: ClaudeHost) -> None:
    store, archive = tmp_path / "store", market / "guard-kit-1.2.0.zip"
    store.mkdir()
    with serve_directory(store, tmp_path / "server") as server:
        _publish(market, store, server.base_url)
        listed = {p["name"]: p for p in json.loads(
            (store / ".claude-plugin" / "marketplace.json").read_text())["plugins"]}
        sha256 = listed["guard-kit"]["source"]["sha256"]

        def host(*args: str | Path, home: Path) -> tuple[int, str]:
            ran = claude_host.run(*args, home=home, prefix=server.prefix, env=server.env)
            return ran.status, ran.stdout + ran.stderr

        home = tmp_path / "home"
        assert host("plugin", "marketplace", "add", store, home=home)[0] == 0
        status, said = host("plugin", "install", f"guard-kit@{MARKET}", home=home)
        assert status == 0, said
        installed = home / ".claude" / "plugins" / "cache" / MARKET / "guard-kit" / "1.2.0"
        assert _files(installed) == _entries(archive)  # byte for byte, executable bits too
        assert f"GET /blobs/sha256/{sha256} HTTP/1.1" in server.requests()

        # one byte appended to the published zip: a fresh install, this time from the
        # marketplace's https URL as a user of a static host adds it, is refused by the host
        blob = store / "blobs" / "sha256" / sha256
        blob.chmod(0o644)
        with blob.open("ab") as stream:
            stream.write(b"\0")
        fresh = tmp_path / "fresh-home"
        url = f"{server.base_url}/.claude-plugin/marketplace.json"
        assert host("plugin", "marketplace", "add", url, home=fresh)[0] == 0
        status, said = host("plugin", "install", f"guard-kit@{MARKET}", home=fresh)
        assert status != 0
        assert "Plugin archive integrity check failed" in said, said
        assert f"expected sha256 {sha256}" in said and "The archive was not installed" in said
        assert not (fresh / ".claude" / "plugins" / "cache" / MARKET / "guard-kit").exists()
