"""A plugin author's first hour, exactly as the README and docs/getting-started.md tell it:
`new` → `cd` → `build` with no arguments → `verify` → `doctor` → `install --home` →
`publish` to a file:// store → `inspect`; then the same through the generated noxfile.py.

Every step runs the installed console script in a clean temporary directory, with the real
cargo, git and (for doctor) the child process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.author_support import BIN, author_env, git, has_command, horon
from tests.helpers import HOST, tree_snapshot

NAME = "acme-notes"
BUNDLE = f"{NAME}-0.1.0-{HOST}"
INSTALL_MISSING = "this tree has no `install` command: the install step is skipped"
pytestmark = [pytest.mark.cargo, pytest.mark.process]


@pytest.fixture(scope="module")
def authored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`horon-bundle new acme-notes`, committed, and `horon-bundle build` run inside it."""
    home = tmp_path_factory.mktemp("author")
    created = horon("new", NAME, cwd=home)
    assert created.status == 0, created.stderr
    workspace = home / NAME
    git("add", "-A", cwd=workspace)
    git("commit", "-q", "-m", "new plugin", cwd=workspace)
    built = horon("build", cwd=workspace)
    assert built.status == 0, built.stderr
    assert "warning" not in built.stderr, built.stderr  # committed: clean, and dist/ ignored
    return workspace


def test_new_then_build_with_no_arguments(authored: Path) -> None:
    dist = authored / "dist"
    assert (dist / BUNDLE / "plugin.json").is_file()
    assert (dist / f"{BUNDLE}.zip").is_file()
    # cargo's own target directory, inside the workspace; both ignored by git
    assert (authored / "target").is_dir()
    assert git("status", "--porcelain", cwd=authored) == ""
    manifest = json.loads((dist / BUNDLE / "plugin.json").read_text())
    assert (manifest["id"], manifest["library"]["path"]) == (NAME, "lib/libacme_notes.so")
    statement = json.loads((dist / BUNDLE / "provenance.json").read_text())
    source = statement["predicate"]["buildDefinition"]["externalParameters"]["source"]
    revision = git("rev-parse", "HEAD", cwd=authored).strip()
    assert source == {"dirty": False, "revision": revision}  # our outputs never make it dirty


@pytest.mark.slow
def test_verify_doctor_inspect(authored: Path) -> None:
    verified = horon("verify", f"dist/{BUNDLE}.zip", cwd=authored)
    assert verified.status == 0, verified.stderr
    assert verified.stdout.rstrip().endswith("verified")
    doctored = horon("doctor", f"dist/{BUNDLE}", cwd=authored)
    assert doctored.status == 0, doctored.stderr
    assert "conformant" in doctored.stdout
    inspected = horon("inspect", f"dist/{BUNDLE}.zip", "--json", cwd=authored)
    assert inspected.status == 0, inspected.stderr
    document = inspected.json()
    assert document["ok"] is True
    assert document["bundle"]["id"] == NAME
    assert document["provenance"]["evidence"] == "invocation"
    assert document["provenance"]["graph"]["tree"]["name"] == NAME


@pytest.mark.slow
def test_install_into_a_home(authored: Path, tmp_path: Path) -> None:
    if not has_command("install"):
        pytest.skip(INSTALL_MISSING)
    installed = horon("install", f"dist/{BUNDLE}", "--home", tmp_path / "home", cwd=authored)
    assert installed.status == 0, installed.stderr
    assert (tmp_path / "home" / "native-plugins" / NAME / "0.1.0" / HOST / "plugin.json").is_file()


@pytest.mark.slow
def test_publish_to_a_file_store_then_inspect(authored: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    gate = {"HORON_PUBLISH_ENABLED": "true", "HORON_PUBLISH_DESTINATION": store.as_uri()}
    skipped = horon("publish", cwd=authored)
    assert skipped.status == 0, skipped.stderr
    assert "publish skipped" in skipped.stdout
    assert tree_snapshot(store) == {}
    published = horon("publish", cwd=authored / "src", env=gate)  # from a subdirectory too
    assert published.status == 0, published.stderr
    assert f"published {NAME} 0.1.0 {HOST}" in published.stdout
    again = horon("publish", cwd=authored, env=gate)
    assert again.status == 0 and "already published" in again.stdout
    # what a consumer does: read the index entry, fetch the archive by its digest, inspect it
    fetched = _fetch(store, tmp_path / "fetched")
    assert fetched.read_bytes() == (authored / "dist" / f"{BUNDLE}.zip").read_bytes()
    inspected = horon("inspect", fetched, cwd=tmp_path)
    assert inspected.status == 0, inspected.stderr
    assert f"{NAME} 0.1.0  {HOST}  release  verified" in inspected.stdout


def _fetch(store: Path, into: Path) -> Path:
    entry = json.loads((store / "index" / NAME / "0.1.0" / f"{HOST}.json").read_text())
    into.mkdir()
    archive: Path = into / str(entry["archive"]["name"])
    shutil.copyfile(store / "blobs" / "sha256" / entry["archive"]["sha256"], archive)
    return archive


@pytest.mark.slow
def test_build_from_a_subdirectory_writes_into_the_workspace(authored: Path) -> None:
    before = (authored / "dist" / f"{BUNDLE}.zip").read_bytes()
    rebuilt = horon("build", cwd=authored / "src")
    assert rebuilt.status == 0, rebuilt.stderr
    assert f"note: using the plugin workspace {authored}" in rebuilt.stderr
    assert not (authored / "src" / "dist").exists()
    assert (authored / "dist" / f"{BUNDLE}.zip").read_bytes() == before  # reproducible


@pytest.mark.slow
def test_a_dirty_tree_is_recorded_warned_and_refused_by_policy(authored: Path,
                                                               tmp_path: Path) -> None:
    workspace = tmp_path / NAME
    shutil.copytree(authored, workspace, ignore=shutil.ignore_patterns("dist", "target"))
    lib = workspace / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n// an uncommitted change\n")
    built = horon("build", "--json", cwd=workspace)
    assert built.status == 0, built.stderr
    assert "warning: the source tree differs from commit" in built.stderr
    assert "src/lib.rs" in built.stderr
    assert any("dirty" in w for w in built.json()["bundles"][0]["warnings"])
    policy = tmp_path / "policy.toml"
    policy.write_text("schema = 1\nclean-source = true\n")
    archive = workspace / "dist" / f"{BUNDLE}.zip"
    refused = horon("verify", archive, "--policy", policy, cwd=workspace)
    assert refused.status == 1, refused.stderr
    assert "policy.unmet" in refused.codes
    assert "clean-source: built from a dirty tree" in refused.stderr
    clean = horon("verify", authored / "dist" / f"{BUNDLE}.zip", "--policy", policy,
                  cwd=workspace)
    assert clean.status == 0, clean.stderr


@pytest.mark.slow
def test_the_generated_noxfile_runs_every_session(authored: Path, tmp_path: Path) -> None:
    nox = shutil.which("nox", path=str(BIN)) or shutil.which("nox")
    if nox is None:
        pytest.fail("nox is not installed (pip install '.[test]')")
    workspace = tmp_path / NAME
    shutil.copytree(authored, workspace, ignore=shutil.ignore_patterns("dist", "target"))
    store = tmp_path / "store"
    store.mkdir()
    env = author_env({"HORON_PUBLISH_ENABLED": "true",
                      "HORON_PUBLISH_DESTINATION": store.as_uri()})
    sessions = ["bundle", "verify", "doctor", "publish"]
    if has_command("install"):
        sessions.insert(3, "install")
        env["HORON_AGENT_HOME"] = str(tmp_path / "home")  # the tool's own variable
    done = subprocess.run([nox, "--no-color", "-s", *sessions], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for session in sessions:
        assert f"Session {session} was successful" in done.stderr, done.stderr
    assert (workspace / "dist" / f"{BUNDLE}.zip").is_file()
    assert _fetch(store, tmp_path / "fetched").is_file()
    if "install" in sessions:  # with no `-- HOME`, where horon-bundle itself would install
        assert (tmp_path / "home" / "native-plugins" / NAME).is_dir()


@pytest.mark.slow
def test_outputs_not_ignored_are_named_with_the_fix(authored: Path, tmp_path: Path) -> None:
    """A workspace from an older template (`.gitignore` without /dist/): the second build's
    tree is dirty because of the first one's outputs, and the warning says what to add."""
    workspace = tmp_path / NAME
    shutil.copytree(authored, workspace, ignore=shutil.ignore_patterns("dist", "target"))
    (workspace / ".gitignore").write_text("/target/\n")
    git("commit", "-q", "-am", "an older .gitignore", cwd=workspace)
    first = horon("build", cwd=workspace)
    assert first.status == 0 and "warning" not in first.stderr, first.stderr
    second = horon("build", cwd=workspace)
    assert second.status == 0, second.stderr
    assert "list /dist/ in .gitignore (build outputs)" in second.stderr


@pytest.mark.slow
def test_build_outside_any_workspace_says_how_to_start(tmp_path: Path) -> None:
    for command in ("build", "compile"):
        result = horon(command, "--json", cwd=tmp_path)
        assert result.status == 1
        finding = result.json()["findings"][0]
        assert finding["code"] == "declaration.missing"
        assert finding["message"] == (f"no horon-release.toml in {tmp_path.resolve()} or any "
                                      "directory above it")
        assert "horon-bundle new NAME" in finding["hint"]
        assert tree_snapshot(tmp_path) == {}
