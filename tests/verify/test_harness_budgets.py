"""Work budgets of the harness judge (issue 20, part 3): small untrusted zips that asked for
minutes of CPU answer within seconds — refused with a code before the work, or read within
their budgets with warnings naming the files. Zips are written directly, as an attacker would
(`tests.harness_support.assembled_zip`)."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest

from tests.harness_support import (
    assembled_zip,
    hostile_manifest,
    nested_brackets_zip,
    repeated_path_zip,
)
from tests.helpers import HANG_GUARD, CliResult, assert_refused, cli, tree_snapshot

SECONDS = HANG_GUARD  # each case took a minute or more before its budget, about 1 s now


def _timed(*args: str | Path) -> tuple[CliResult, float]:
    start = time.monotonic()
    result = cli(*args)
    return result, time.monotonic() - start


def _refused_quickly(tmp_path: Path, archive: Path, code: str) -> CliResult:
    """Refused with `code` alone, one escaped line, exit 1, within SECONDS, nothing written."""
    before = tree_snapshot(tmp_path)
    result, elapsed = _timed("verify", archive)
    assert elapsed < SECONDS, elapsed
    assert_refused(result, code)
    assert result.codes == [code], result.codes
    [line] = [line for line in result.stderr.splitlines() if line.startswith("ERROR ")]
    assert line.isprintable()
    assert tree_snapshot(tmp_path) == before
    return result


def _warnings(result: CliResult, code: str) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith(f"WARNING {code}:")]


@pytest.mark.slow
def test_a_path_listed_400000_times_is_refused_before_it_is_looked_up(tmp_path: Path) -> None:
    archive = repeated_path_zip(tmp_path / "zips")
    assert archive.stat().st_size < 450_000  # the 419 KB zip, rebuilt
    result = _refused_quickly(tmp_path, archive, "harness.limit")
    assert "commands: 400000 paths, at most 10000" in result.stderr


@pytest.mark.slow
def test_ten_thousand_paths_within_the_limit_are_read_by_lookups(tmp_path: Path) -> None:
    """Under the limit the work is linear: 4,000 directories named one by one, their parent
    named 5,999 times, 4,000 commands with one frontmatter (parsed once)."""
    files = {f"c/{index:04d}/x.md": b"---\ndescription: one\n---\nbody\n"
             for index in range(4000)}
    paths = [f"./c/{index:04d}" for index in range(4000)] + ["./c"] * 5999
    files[".claude-plugin/plugin.json"] = hostile_manifest(commands=paths)
    archive = assembled_zip(tmp_path / "amp-1.0.0.zip", files)
    result, elapsed = _timed("verify", archive, "--json")
    assert elapsed < SECONDS, elapsed
    assert result.status == 0, result.stderr[-2000:]
    with zipfile.ZipFile(archive) as opened:
        catalogue = json.loads(opened.read("catalogue.json"))
    assert len(catalogue["commands"]) == 4000
    assert {c["frontmatter_read_as"] for c in catalogue["commands"]} == {"yaml"}


@pytest.mark.slow
def test_nested_brackets_are_read_no_further_and_named_in_warnings(tmp_path: Path) -> None:
    archive = nested_brackets_zip(tmp_path / "zips")
    assert archive.stat().st_size < 40_000  # the 23 KB zip, no two files alike
    result, elapsed = _timed("verify", archive)
    assert elapsed < SECONDS, elapsed
    assert result.status == 0, result.stderr[-2000:]
    warned = _warnings(result, "harness.frontmatter")
    assert len(warned) == 60
    assert all("nested deeper than 16" in line and "no frontmatter read" in line
               for line in warned)
    assert {line.split()[2] for line in warned} == {f"commands/c{i:02d}.md:" for i in range(60)}
    with zipfile.ZipFile(archive) as opened:
        commands = json.loads(opened.read("catalogue.json"))["commands"]
    assert {(c["frontmatter_read_as"], json.dumps(c["frontmatter"])) for c in commands} == {
        ("none", "{}")}
    strict, elapsed = _timed("verify", archive, "--strict")
    assert elapsed < SECONDS, elapsed
    assert_refused(strict, "harness.frontmatter")


def _block(kind: str, index: int) -> bytes:
    """A frontmatter over one budget, made distinct by `index` (no cache shares the work)."""
    if kind == "indentation":
        body = "a:\n" + "".join(" " * (level + 1) + f"k{level}:\n" for level in range(60))
    elif kind == "alias-bomb":
        body = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
            for i in range(6))
    elif kind == "flow-items":
        body = "x: [" + ",".join(["a"] * 20_000) + "]\n"
    elif kind == "keys":
        body = "".join(f"k{key}: v\n" for key in range(4000))
    else:
        body = "description: " + "word " * 12_000 + "\n"
    return f"---\n# {index}\n{body}---\nbody\n".encode()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["indentation", "alias-bomb", "flow-items", "keys", "long"])
def test_frontmatter_over_a_budget_is_a_warning_not_minutes(tmp_path: Path, kind: str) -> None:
    files = {f"agents/a{index:03d}.md": _block(kind, index) for index in range(150)}
    files[".claude-plugin/plugin.json"] = hostile_manifest()
    archive = assembled_zip(tmp_path / "amp-1.0.0.zip", files)
    result, elapsed = _timed("verify", archive)
    assert elapsed < SECONDS, elapsed
    assert result.status == 0, result.stderr[-2000:]
    warned = [line for line in result.stderr.splitlines()
              if line.startswith("WARNING harness.frontmatter: agents/a")]
    assert warned and all("no frontmatter read" in line for line in warned), warned[:3]


def _hooks_file(padding: int) -> bytes:
    return json.dumps({"description": "x" * padding, "hooks": {}}).encode()


@pytest.mark.slow
def test_json_files_over_their_joint_budget_are_refused(tmp_path: Path) -> None:
    """60 hook files of 1 MiB each, a 72 KB zip (entries up to 1 MiB have no ratio limit):
    every one was parsed, 25 s here; now the fourth (after plugin.json and three) is refused
    before it is parsed."""
    files = {f"h/{index:02d}.json": _hooks_file((1 << 20) - 40) for index in range(60)}
    files[".claude-plugin/plugin.json"] = hostile_manifest()
    listed = {**files, ".claude-plugin/plugin.json": hostile_manifest(
        hooks=[f"./h/{index:02d}.json" for index in range(60)])}
    archive = assembled_zip(tmp_path / "amp-1.0.0.zip", listed, catalogue_of=files)
    assert archive.stat().st_size < 100_000
    result = _refused_quickly(tmp_path, archive, "harness.limit")
    assert "h/03.json: 1048568 bytes would take the plugin's JSON files over 4194304 bytes" in (
        result.stderr)


@pytest.mark.parametrize(("hooks", "message"), [
    ({"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}] * 1000}]},
     "more than 1000 events, matcher groups and hooks"),
    ({"PreToolUse": [{"hooks": [{"type": "command", "command": "echo " + "x" * 70_000}]}]},
     "at most 65536"),
])
def test_hook_declarations_over_their_budget_are_refused(
        tmp_path: Path, hooks: dict[str, object], message: str) -> None:
    files = {".claude-plugin/plugin.json": hostile_manifest()}
    listed = {**files, "hooks/hooks.json": json.dumps({"hooks": hooks}).encode()}
    archive = assembled_zip(tmp_path / "amp-1.0.0.zip", listed, catalogue_of=files)
    result = _refused_quickly(tmp_path, archive, "harness.limit")
    assert message in result.stderr


@pytest.mark.slow
def test_a_flood_of_findings_is_listed_a_hundred_per_code(tmp_path: Path) -> None:
    manifest = json.loads(hostile_manifest())
    manifest.update({f"k{index:06d}": 0 for index in range(20_000)})
    files = {".claude-plugin/plugin.json": json.dumps(manifest).encode()}
    archive = assembled_zip(tmp_path / "amp-1.0.0.zip", files)
    result, elapsed = _timed("verify", archive)
    assert elapsed < SECONDS, elapsed
    assert result.status == 0, result.stderr[-2000:]
    warned = _warnings(result, "harness.manifest-unknown-field")
    assert len(warned) == 101
    assert "… and 19900 more harness.manifest-unknown-field findings" in warned[-1]
    strict, elapsed = _timed("verify", archive, "--strict")
    assert elapsed < SECONDS, elapsed
    assert_refused(strict, "harness.manifest-unknown-field")
    assert len(strict.codes) == 101


@pytest.mark.slow
def test_scripts_over_lint_budgets_are_unjudged_not_slow(tmp_path: Path) -> None:
    """A hook running Python of 200 KiB (over the syntax tree's budget), a 300 KiB shell
    script (over one script's), and a second copy of each: warnings, within seconds."""
    dense = "x = 1\n" * 35_000
    files = {".claude-plugin/plugin.json": hostile_manifest(),
             "hooks/a.py": dense.encode(), "hooks/b.py": ("y = 2\n" + dense).encode(),
             "hooks/c.sh": ("a " * 150_000).encode(), "hooks/d.sh": b"printenv GH_TOKEN\n",
             "hooks/hooks.json": json.dumps({"hooks": {"PreToolUse": [{"hooks": [
                 {"type": "command", "command": f"{program} ${{CLAUDE_PLUGIN_ROOT}}/hooks/{n}"}
                 for program, n in (("python3", "a.py"), ("python3", "b.py"),
                                    ("sh", "c.sh"), ("sh", "d.sh"))]}]}}).encode()}
    archive = assembled_zip(tmp_path / "amp-1.0.0.zip", files)
    result, elapsed = _timed("verify", archive)
    assert elapsed < SECONDS, elapsed
    assert result.status == 0, result.stderr[-2000:]
    unjudged = "\n".join(_warnings(result, "hook.unjudged"))
    assert "hooks/c.sh" in unjudged and "over 262144 bytes" in unjudged
    assert "Python over lint's budget" in unjudged
    assert "GH_TOKEN" in "\n".join(_warnings(result, "hook.env-credential"))
