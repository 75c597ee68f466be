"""GitHub workflows: actionlint and zizmor (pedantic, offline) find nothing; the release
workflow keeps its shape (gate in the tool, least privilege, pinned actions)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
RELEASE = REPO / ".github" / "workflows" / "release.yml"
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
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "release.yml"}


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
        start = lines.index("name: release")
        return [line for line in lines[start:]
                if not line.startswith(("  WORKSPACE:", "  HORON_BUNDLE:"))]

    assert body(TEMPLATE) == body(RELEASE)
    assert "  WORKSPACE: templates/plugin" in RELEASE.read_text()
    assert "  WORKSPACE: . " in TEMPLATE.read_text()
