"""GitHub workflows: actionlint and zizmor (pedantic, offline) find nothing; the release
workflows keep their shape (gate in the tool, least privilege, pinned actions); nothing we ship
or generate installs a package by name (tests/workflow_pins.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.workflow_pins import install_problems, workflow_problems

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
RELEASE = REPO / ".github" / "workflows" / "example-release.yml"  # the example plugin's
OWN_RELEASE = REPO / ".github" / "workflows" / "release.yml"  # horon-bundle's, to PyPI
TEMPLATE = REPO / "templates" / "github" / "release.yml"
ALL = [*WORKFLOWS, TEMPLATE]
_USES = re.compile(r"^\s*(?:- )?uses: (\S+)(.*)$")
_PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (pip install '.[test]')")
    return path


def _jobs(text: str) -> dict[str, str]:
    """Job id -> the job's lines (a flat split of the `jobs:` mapping)."""
    body = text.split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([\w-]+):\n", body, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_there_are_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "release.yml", "example-release.yml"}


@pytest.mark.parametrize("workflow", ALL, ids=lambda p: p.relative_to(REPO).as_posix())
def test_actionlint_finds_nothing(workflow: Path) -> None:
    done = subprocess.run([_tool("actionlint"), "-no-color", str(workflow)],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_pedantic_finds_nothing() -> None:
    done = subprocess.run([_tool("zizmor"), "--offline", "--persona=pedantic", "--no-progress",
                           *map(str, ALL)], capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings" in done.stdout + done.stderr


@pytest.mark.parametrize("workflow", ALL, ids=lambda p: p.relative_to(REPO).as_posix())
def test_actions_are_pinned_to_commits(workflow: Path) -> None:
    for line in workflow.read_text().splitlines():
        match = _USES.match(line)
        if match:
            assert _PINNED.match(match.group(1)), line
            assert re.match(r"^ # v\d+\.\d+\.\d+$", match.group(2)), line


@pytest.mark.parametrize("workflow", [RELEASE, TEMPLATE], ids=["release", "template"])
def test_release_workflow_shape(workflow: Path) -> None:
    text = workflow.read_text()
    assert "\npermissions:\n  contents: read\n" in text
    jobs = _jobs(text)
    assert set(jobs) == {"build", "verify", "sign", "publish"}
    runners = re.findall(r"- runner: (\S+)", jobs["build"])
    assert runners == ["ubuntu-24.04", "ubuntu-24.04-arm", "macos-14", "windows-2022"]
    for job, lines in jobs.items():
        assert ("id-token: write" in lines) == (job == "sign"), job
        assert ("packages: write" in lines) == (job == "publish"), job
    publish = jobs["publish"]
    assert "needs: [verify, sign]" in publish
    assert "if: ${{ always() }}" in publish
    assert "HORON_PUBLISH_ENABLED: ${{ vars.HORON_PUBLISH_ENABLED }}" in publish
    assert "HORON_PUBLISH_DESTINATION: ${{ vars.HORON_PUBLISH_DESTINATION }}" in publish
    assert "horon-bundle publish dist" in publish
    # verify and publish append their own step summaries (tests/cli/test_cli_output.py); a hand-made
    # one in the workflow would say the same twice
    assert "GITHUB_STEP_SUMMARY" not in text
    assert "horon-bundle sign" in jobs["sign"]
    assert 'horon-bundle build "$WORKSPACE" --target "$TARGET"' in jobs["build"]


def test_template_is_the_release_workflow() -> None:
    """The template differs from this repository's workflow only in its header and inputs."""

    def body(path: Path) -> list[str]:
        lines = path.read_text().splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("name: "))
        text = "\n".join(lines[start + 1:]).replace("example-release", "release").replace(
            "example-v*", "v*")
        return [line for line in text.splitlines() if not line.startswith("  WORKSPACE:")]

    assert body(TEMPLATE) == body(RELEASE)
    assert "  WORKSPACE: templates/plugin" in RELEASE.read_text()
    assert "  WORKSPACE: . " in TEMPLATE.read_text()


def test_horon_bundles_own_release_workflow() -> None:
    """nox -s dist, twine check, trusted publishing with PEP 740 attestations, gated by two
    repository variables; the OIDC token only in the publishing job."""
    text = OWN_RELEASE.read_text()
    jobs = _jobs(text)
    assert set(jobs) == {"dist", "publish"}
    assert "run: nox -s dist" in jobs["dist"]
    assert "twine check --strict" in jobs["dist"]
    assert "id-token: write" not in jobs["dist"] and "id-token: write" in jobs["publish"]
    assert "environment: pypi" in jobs["publish"]
    assert "ENABLED: ${{ vars.HORON_PYPI_PUBLISH_ENABLED }}" in jobs["publish"]
    assert "PROJECT: ${{ vars.HORON_PYPI_PROJECT }}" in jobs["publish"]
    assert '[ "$ENABLED" = true ] && [ -n "$PROJECT" ]' in jobs["publish"]
    assert re.search(r"uses: pypa/gh-action-pypi-publish@[0-9a-f]{40} # v1\.1[1-9]", text)
    assert "attestations: true" in jobs["publish"]
    assert "password:" not in text  # trusted publishing: no token


def _generated_workspace(tmp_path: Path, direct_url: str | None) -> Path:
    """What `new` writes, with the pin computed from `direct_url` (PEP 610)."""
    from horon_bundle.scaffold.new import render  # noqa: PLC0415
    from horon_bundle.scaffold.pin import pin_from_direct_url  # noqa: PLC0415
    from horon_bundle.scaffold.templates import names_for  # noqa: PLC0415

    pin = pin_from_direct_url(direct_url)
    root = tmp_path / "generated"
    for relative, data in render(names_for("acme-notes", "MIT"), pin).items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    return root


COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("workflow", ALL, ids=lambda p: p.relative_to(REPO).as_posix())
def test_nothing_we_ship_installs_unpinned(workflow: Path) -> None:
    assert workflow_problems(workflow, REPO) == []


@pytest.mark.parametrize("direct_url", [
    None, '{"url": "file:///src/horon-bundle", "dir_info": {"editable": true}}',
    f'{{"url": "https://github.com/acme/horon-bundle", "vcs_info": {{"vcs": "git", '
    f'"commit_id": "{COMMIT}"}}}}'], ids=["index", "checkout", "commit"])
def test_nothing_new_writes_installs_unpinned(tmp_path: Path, direct_url: str | None) -> None:
    root = _generated_workspace(tmp_path, direct_url)
    assert workflow_problems(root / ".github" / "workflows" / "release.yml", root) == []
    script = (root / ".github" / "install-horon-bundle.sh").read_text()
    if direct_url is not None and COMMIT in direct_url:
        assert f'"horon-bundle @ git+https://github.com/acme/horon-bundle@{COMMIT}"' in script
    else:
        # the placeholder fails closed: the job stops, saying what to set
        done = subprocess.run(["sh", str(root / ".github" / "install-horon-bundle.sh")],
                              capture_output=True, text=True, check=False, cwd=root)
        assert done.returncode == 1
        assert "::error file=.github/install-horon-bundle.sh::horon-bundle is not pinned" \
            in done.stderr
        assert "pip" not in done.stdout


@pytest.mark.parametrize(("text", "problem"), [
    ("python -m pip install horon-bundle==0.1.0", "'horon-bundle==0.1.0' is installed by name"),
    ('python -m pip install "$HORON_BUNDLE"', "'$HORON_BUNDLE' is installed by name"),
    ("pip install nox uv", "'nox' is installed by name"),
    ("pipx install horon-bundle", "installed by name"),
    ("uvx horon-bundle build", "installed by name"),
    ("uv tool install horon-bundle", "installed by name"),
    ("uv pip install --system horon-bundle", "installed by name"),
    ("FOO=1 sudo pip3 install a && echo b", "'a' is installed by name"),
    ("curl -sSfL https://example.com/install.sh | sh", "a download piped into a shell"),
    ("wget -qO- https://x | sudo bash", "a download piped into a shell"),
    ("python -m pip install -r req-unhashed.txt", "-r without --require-hashes"),
    ("python -m pip install --require-hashes -r req-unhashed.txt", "has no --hash"),
    ("python -m pip install .", "a local path whose dependencies come unpinned"),
    ("python -m pip install horon-bundle@git+https://github.com/a/b@main", "by name"),
])
def test_the_lint_finds_unpinned_installs(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "req-unhashed.txt").write_text("nox==2025.1.1\n")
    problems = install_problems(text, tmp_path)
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize("text", [
    "python -m pip install --require-hashes -r req.txt",
    f'python -m pip install "horon-bundle @ git+https://github.com/acme/h@{COMMIT}"',
    "python -m pip install --no-deps --no-index .",
    "echo pip install nothing-here",
    "# pip install in a comment",
])
def test_the_lint_accepts_pinned_installs(tmp_path: Path, text: str) -> None:
    (tmp_path / "req.txt").write_text("nox==2025.1.1 \\\n    --hash=sha256:" + "a" * 64 + "\n")
    assert install_problems(text, tmp_path) == []
