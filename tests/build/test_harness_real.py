"""Real public plugins build as they are, taken from the npm registry at test time.

The packages are pinned by version and sha512 integrity, cached outside the repository
($HORON_TEST_NPM_CACHE, default ~/.cache/horon-bundle-tests/npm) and fetched with `npm pack`
when the cache is empty; their code is never committed here. Without npm and without a cache
the tests are skipped, saying why.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.helpers import assert_refused, cli

PACKAGES = {
    "selfish-pipeline@1.3.0": (
        "selfish-pipeline-1.3.0.tgz",
        "sha512-VvwhCwZss/379xp3/6yWCcA22HD3aZKqMZjur7ZlygPsiv2OkpiJZS2ry5xd60sphGUq1jJjwDcP+Wh9"
        "Wx15CQ=="),
    "@coo-quack/sensitive-canary@0.8.1": (
        "coo-quack-sensitive-canary-0.8.1.tgz",
        "sha512-PRYk2XZRPQTXGMHLNMQiRDGkBvdzMoOvjFG1RhDBrwlvB+nopDPalOOubq0yuNq38Xsx7TXZlGmHqkPs"
        "K56ckw=="),
    "claude-dev-environment-setup@1.4.0": (
        "claude-dev-environment-setup-1.4.0.tgz",
        "sha512-LWjtqaSrbOmiR1imPtntTgiqoTnkqJRe9fmIKJjgkaTcaP7ALlB/Q4aA90o3+aerbhkWdLtNUnOjGK40"
        "NJudEA=="),
}


def _cache() -> Path:
    configured = os.environ.get("HORON_TEST_NPM_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "horon-bundle-tests" / "npm"


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _package(spec: str, tmp_path: Path) -> Path:
    """The unpacked package directory of `spec` (its `package/`)."""
    name, integrity = PACKAGES[spec]
    cache = _cache()
    tarball = cache / name
    if not tarball.is_file():
        if shutil.which("npm") is None:
            pytest.skip(f"{spec}: not cached in {cache} and npm is not installed")
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["npm", "pack", spec, "--pack-destination", str(cache)],
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0 or not tarball.is_file():
            pytest.skip(f"{spec}: npm pack failed (registry unreachable?): "
                        f"{done.stderr.strip()[-300:]}")
    assert _integrity(tarball) == integrity, f"{tarball} is not the pinned {spec}"
    target = tmp_path / "npm" / name.removesuffix(".tgz")
    with tarfile.open(tarball) as archive:
        archive.extractall(target, filter="data")
    return target / "package"


def _zip(out: Path, name: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(out / name)


def test_a_real_marketplace_with_scripts_builds_as_it_is(tmp_path: Path) -> None:
    package = _package("selfish-pipeline@1.3.0", tmp_path)
    outs = []
    for index in range(2):
        out = tmp_path / f"out-{index}"
        result = cli("build", package, "--out", out, "--json")
        assert result.status == 0, result.stderr
        outs.append(out)
    archive = "selfish-1.3.0.zip"
    assert (outs[0] / archive).read_bytes() == (outs[1] / archive).read_bytes()
    index = json.loads((outs[0] / "selfish-pipeline.index.json").read_text())
    assert [(p["name"], p["version"]) for p in index["plugins"]] == [("selfish", "1.3.0")]
    with _zip(outs[0], archive) as bundle:
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in bundle.infolist()}
        catalogue = json.loads(bundle.read("catalogue.json"))
    scripts = [n for n in modes if n.startswith("scripts/") and n.endswith(".sh")]
    assert scripts and all(modes[n] == 0o755 for n in scripts)
    assert len(catalogue["commands"]) == 18 and len(catalogue["agents"]) == 2
    assert {h["event"] for h in catalogue["hooks"]} >= {"PreToolUse", "SessionStart", "Stop"}
    assert cli("verify", outs[0] / archive, "--host", "claude-code").status == 0
    muse = cli("verify", outs[0] / archive, "--host", "muse-code")
    assert muse.status == 0, muse.stderr
    assert "harness.event-not-fired" in muse.stderr and "SessionEnd" in muse.stderr


def test_interpreter_prefixed_quoted_hooks_with_a_described_hooks_json(tmp_path: Path) -> None:
    package = _package("@coo-quack/sensitive-canary@0.8.1", tmp_path)
    hooks = json.loads((package / "hooks" / "hooks.json").read_text())
    assert "description" in hooks  # the top-level description real hooks files carry
    out = tmp_path / "out"
    result = cli("build", package, "--out", out)
    assert result.status == 0, result.stderr
    archive = out / "sensitive-canary-0.8.1.zip"
    verified = cli("verify", archive, "--json")
    assert verified.status == 0, verified.stderr
    assert "src/pre-tool-use-hook.ts" in json.dumps(verified.json())
    assert_refused(cli("verify", archive, "--host", "muse-code"), "hook.env-credential")
    (package / "src" / "pre-tool-use-hook.ts").unlink()  # the class the host itself misses
    assert_refused(cli("build", package, "--out", tmp_path / "out2"), "hook.command-missing")


def test_a_plugin_with_nested_skills_builds_from_either_directory(tmp_path: Path) -> None:
    package = _package("claude-dev-environment-setup@1.4.0", tmp_path)
    for root, version in ((package, "1.1.0"),
                          (package / "plugins" / "dev-environment-setup", "1.0.2")):
        out = tmp_path / f"out-{version}"
        result = cli("build", root, "--out", out)
        assert result.status == 0, result.stderr
        with _zip(out, f"dev-environment-setup-{version}.zip") as bundle:
            catalogue = json.loads(bundle.read("catalogue.json"))
        assert [s["id"] for s in catalogue["skills"]] == ["environment-check"]
