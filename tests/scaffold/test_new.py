"""`horon-bundle new`: a buildable workspace from the shipped templates, never over anything."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from horon_bundle.scaffold.pin import INSTALL_SCRIPT
from horon_bundle.scaffold.templates import FILES, LICENSE_TEMPLATES, names_for, substitute
from tests.author_support import git, horon
from tests.helpers import HOST, REPO, assert_refused, tree_snapshot

TEMPLATES = REPO / "templates"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Acme", "a", "1abc", "acme_notes", "acme notes", "acme-",
                                  "acme--notes", "fn", "test", "con", "x" * 64, "acme\nERROR x",
                                  "../escape", "-rf"])
def test_a_name_that_is_no_plugin_id_is_refused(tmp_path: Path, name: str) -> None:
    result = horon("new", "--", name, cwd=tmp_path) if name.startswith("-") else horon(
        "new", name, cwd=tmp_path)
    assert_refused(result, "new.name")
    assert tree_snapshot(tmp_path) == {}


@pytest.mark.parametrize("occupant", ["file", "empty-dir", "dir", "symlink"])
def test_new_never_overwrites_anything(tmp_path: Path, occupant: str) -> None:
    target = tmp_path / "acme-notes"
    if occupant == "file":
        target.write_text("mine\n")
    elif occupant == "empty-dir":
        target.mkdir()
    elif occupant == "dir":
        target.mkdir()
        (target / "Cargo.toml").write_text("[package]\n")
    else:
        target.symlink_to(tmp_path / "elsewhere")
    before = tree_snapshot(tmp_path)
    result = horon("new", "acme-notes", cwd=tmp_path)
    assert_refused(result, "new.exists")
    assert tree_snapshot(tmp_path) == before
    assert not (tmp_path / "elsewhere").exists()


def test_dir_and_license_options(tmp_path: Path) -> None:
    result = horon("new", "acme-notes", "--dir", "plugins/notes", "--license", "MIT", "--json",
                   cwd=tmp_path)
    assert result.status == 0, result.stderr
    document = result.json()
    workspace = tmp_path / "plugins" / "notes"
    assert document["workspace"] == str(workspace)
    assert (document["id"], document["package"], document["license"]) == (
        "acme-notes", "acme-notes", "MIT")
    assert sorted(document["files"]) == sorted([*FILES, "LICENSE", INSTALL_SCRIPT])
    # run from this checkout, horon-bundle has no immutable pin: a placeholder, and said
    assert document["pin"]["kind"] == "placeholder"
    assert f"{INSTALL_SCRIPT} stops every release job" in result.stderr + result.stdout
    assert (workspace / INSTALL_SCRIPT).stat().st_mode & 0o111
    licence = (workspace / "LICENSE").read_text()
    assert licence.startswith("MIT License\n\nCopyright (c) 20")
    assert "the Acme Notes authors" in licence and "<" not in licence
    assert 'license = "MIT"' in (workspace / "Cargo.toml").read_text()
    assert "Apache" not in (workspace / "README.md").read_text()
    # nothing but the new directory (no staging left beside it)
    assert sorted(p.name for p in (tmp_path / "plugins").iterdir()) == ["notes"]


def test_an_unknown_license_is_a_usage_error(tmp_path: Path) -> None:
    result = horon("new", "acme-notes", "--license", "GPL-3.0", cwd=tmp_path)
    assert result.status == 2
    assert tree_snapshot(tmp_path) == {}


def test_the_rendered_workspace_names_only_the_new_plugin(tmp_path: Path) -> None:
    assert horon("new", "acme-notes", "--no-git", cwd=tmp_path).status == 0
    workspace = tmp_path / "acme-notes"
    assert not (workspace / ".git").exists()
    for path in workspace.rglob("*"):
        if path.is_file() and path.name != "LICENSE":
            assert not re.search(r"horon.example|(?<![\w-])[Ee]xample(?![A-Za-z0-9])",
                                 path.read_text()), path


def test_a_name_holding_example_is_substituted_once(tmp_path: Path) -> None:
    assert horon("new", "example-two", cwd=tmp_path).status == 0
    workspace = tmp_path / "example-two"
    for path in workspace.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert "example-two-two" not in path.read_text(), path
    declaration = (workspace / "horon-release.toml").read_text()
    assert 'id = "example-two"' in declaration and 'package = "example-two"' in declaration
    assert 'name = "Example Two"' in declaration
    assert 'name = "example-two"' in (workspace / "Cargo.lock").read_text()


def test_every_template_file_is_rendered() -> None:
    """The file table and the template tree agree: nothing of the example is left out, and
    every substitution target exists (a renamed template file fails here, not at `new`)."""
    tracked = subprocess.run(["git", "ls-files", "templates"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    used = {f"templates/{source}" for source in [*FILES.values(), *LICENSE_TEMPLATES.values()]}
    assert used <= set(tracked)
    assert set(tracked) - used == set()


def test_substitution_is_one_pass() -> None:
    names = names_for("example-two", "MIT")
    assert substitute("horon-example example__whoami example-0.1.0 examples Example",
                      names) == "example-two example-two__whoami example-two-0.1.0 examples " \
                                "Example Two"


@pytest.mark.slow
@pytest.mark.cargo
def test_renaming_the_plugin_is_one_edit(tmp_path: Path) -> None:
    """The id is written once: change it in horon-release.toml and the library, plugin.json,
    the handshake and the tool name all follow (doctor checks the loaded table)."""
    assert horon("new", "acme-notes", cwd=tmp_path).status == 0
    workspace = tmp_path / "acme-notes"
    declaration = workspace / "horon-release.toml"
    declaration.write_text(declaration.read_text().replace('id = "acme-notes"',
                                                           'id = "acme-memo"'))
    built = horon("build", "--target-dir", tmp_path / "target", cwd=workspace)
    assert built.status == 0, built.stderr
    bundle = workspace / "dist" / f"acme-memo-0.1.0-{HOST}"
    assert json.loads((bundle / "plugin.json").read_text())["id"] == "acme-memo"
    doctored = horon("doctor", bundle, "--json", cwd=workspace)
    assert doctored.status == 0, doctored.stderr
    assert "acme-memo__whoami" in doctored.stdout


@pytest.mark.slow
@pytest.mark.cargo
def test_the_new_workspace_builds_offline_with_locked(tmp_path: Path) -> None:
    assert horon("new", "acme-notes", cwd=tmp_path).status == 0
    workspace = tmp_path / "acme-notes"
    done = subprocess.run(["cargo", "build", "--offline", "--locked", "--release",
                           "--target-dir", str(tmp_path / "target")], cwd=workspace,
                          capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "target" / "release" / "libacme_notes.so").is_file()
    assert git("status", "--porcelain", cwd=workspace).split() == [
        "??", ".github/", "??", ".gitignore", "??", "Cargo.lock", "??", "Cargo.toml", "??",
        "LICENSE", "??", "README.md", "??", "build.rs", "??", "horon-release.toml", "??",
        "include/", "??", "noxfile.py", "??", "src/"]


def test_missing_shipped_templates_are_an_environment_problem(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken installation (templates stripped from the package): exit 3, nothing written."""
    from horon_bundle.core.errors import Refused  # noqa: PLC0415
    from horon_bundle.scaffold import new  # noqa: PLC0415

    partial = tmp_path / "templates"
    (partial / "plugin").mkdir(parents=True)
    (partial / "plugin" / "Cargo.toml").write_text("[package]\n")
    monkeypatch.chdir(tmp_path)
    for root in (None, partial):
        monkeypatch.setattr(new, "shipped", lambda _name, root=root: root)
        with pytest.raises(Refused) as refused:
            new.new_workspace(new.NewRequest(name="acme-notes"))
        assert refused.value.codes() == ["new.templates"]
        assert refused.value.exit_status == 3
        assert not (tmp_path / "acme-notes").exists()
