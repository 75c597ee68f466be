"""The harness reader's work budgets one at a time, in-process (issue 20, part 3): the file
index, the frontmatter reader's budgets and cache, and the limits checked before the work."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core.errors import Findings
from horon_bundle.model.harness import frontmatter as fm
from horon_bundle.model.harness.file_index import FileIndex
from horon_bundle.model.harness.reader import read_plugin
from tests.harness_support import MemoryPlugin, hostile_manifest


def test_the_file_index_answers_by_lookup() -> None:
    index = FileIndex(["a/b/c.md", "a/b0", "a/bc/d", "ab/x", "z"])
    assert "a/b0" in index and "a/b" not in index and len(index) == 5
    assert index.is_directory("a") and index.is_directory("a/b") and index.is_directory("")
    assert not index.is_directory("a/b0") and not index.is_directory("b")
    assert index.under("a/b") == ["a/b/c.md"]  # not a/b0, not a/bc/d
    assert index.under("a") == ["a/b/c.md", "a/b0", "a/bc/d"]
    assert index.under("") == ["a/b/c.md", "a/b0", "a/bc/d", "ab/x", "z"]
    assert index.exists("a/bc") and index.exists("z") and not index.exists("y")
    assert not FileIndex([]).is_directory("")


_SEGMENT = st.text(alphabet="ab/0.-", min_size=1, max_size=3).filter(
    lambda s: "//" not in s and not s.startswith("/") and not s.endswith("/"))


@given(st.lists(_SEGMENT, max_size=12), _SEGMENT)
def test_the_file_index_agrees_with_a_scan(paths: list[str], asked: str) -> None:
    index = FileIndex(paths)
    under = sorted(p for p in set(paths) if p.startswith(asked + "/"))
    assert index.under(asked) == sorted(p for p in paths if p.startswith(asked + "/"))
    assert index.is_directory(asked) == bool(under)
    assert index.exists(asked) == (asked in paths or bool(under))


def _block(body: str) -> bytes:
    return f"---\n{body}---\nbody\n".encode()


@pytest.mark.parametrize(("body", "why"), [
    ("x: " + "[" * 17 + "]" * 17 + "\n", "[ and { nested deeper than 16"),
    ("x: " + "{a: " * 17 + "b" + "}" * 17 + "\n", "[ and { nested deeper than 16"),
    ("a:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(17)), "indented deeper than 16"),
    ("".join(f"k{i}: v\n" for i in range(2100)), "more than 4096 YAML nodes"),
    ("a: &a [x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b]"
     "\nd: [*c,*c,*c,*c,*c,*c,*c,*c]\n", "more than 4096 YAML nodes once aliases are expanded"),
    ("x: \"]]]]]]]]]]]]]]]]]]]]\"\ny: " + "[" * 17 + "]" * 17 + "\n", "nested deeper than 16"),
])
def test_frontmatter_over_a_budget_is_read_no_further(body: str, why: str) -> None:
    parsed = fm.parse_markdown(_block(body))
    assert (parsed.read_as, parsed.values) == (fm.NONE, {})
    assert parsed.problem is not None and why in parsed.problem


def test_frontmatter_at_its_budgets_is_read() -> None:
    deep = "x: " + "[" * 16 + "]" * 16 + "\n"
    assert fm.parse_markdown(_block(deep)).read_as == fm.YAML
    nodes = "".join(f"k{i}: v\n" for i in range(2047))  # 4094 nodes with the mapping
    assert fm.parse_markdown(_block(nodes)).read_as == fm.YAML
    size = "d: " + "w" * (fm.MAX_FRONTMATTER_BYTES - 4) + "\n"
    assert fm.parse_markdown(_block(size)).read_as == fm.YAML
    over = fm.parse_markdown(_block(size + "e: 1\n"))
    assert over.read_as == fm.NONE and over.problem == "frontmatter over 65536 bytes"


def test_one_read_parses_each_block_once_within_its_run_budget() -> None:
    reader = fm.FrontmatterReader()
    same = _block("name: x\ndescription: y\n")
    first = reader.parse_markdown(same)
    assert reader.parse_markdown(same) is first  # one digest, one parse
    assert (reader.spent_nodes, reader.spent_bytes) == (5, 23)
    dense = [_block(f"# {i}\n" + "".join(f"k{k}: v\n" for k in range(2000))) for i in range(6)]
    read = [reader.parse_markdown(block) for block in dense]
    assert [r.read_as for r in read] == [fm.YAML] * 2 + [fm.NONE] * 4  # 4001 nodes each
    assert read[2].problem == f"frontmatter over its budget: {fm.SPENT}"  # stopped midway
    assert read[3].problem == fm.SPENT  # not begun
    assert reader.spent_nodes <= fm.MAX_RUN_NODES + fm.MAX_NODES


def test_bytes_are_charged_as_far_as_yaml_scanned() -> None:
    reader = fm.FrontmatterReader()
    refused = _block("x: " + "[" * 20_000 + "]" * 20_000 + "\n")
    assert reader.parse_markdown(refused).read_as == fm.NONE
    assert reader.spent_bytes < 100
    long = [_block(f"# {i}\nd: " + "w" * 60_000 + "\n") for i in range(10)]
    assert [reader.parse_markdown(b).read_as for b in long] == [fm.YAML] * 9 + [fm.NONE]


def test_a_block_parsed_twice_is_charged_both_parses() -> None:
    """YAML that fails at its last line is parsed again, quoted as the host quotes it: both
    parses are charged, so a plugin of such blocks spends its budget twice as fast."""
    reader = fm.FrontmatterReader()
    body = "d: " + "w" * 60_000 + "\n"
    bad = [_block(f"# {i}\n{body}x: a: b\n") for i in range(12)]
    read = [reader.parse_markdown(block).read_as for block in bad]
    assert read == [fm.QUOTED] * 5 + [fm.NONE] * 7  # 120 KB a block, 512 KiB in all
    assert fm.MAX_RUN_BYTES <= reader.spent_bytes < fm.MAX_RUN_BYTES + 130_000


def test_the_second_parse_is_linear_in_its_lines() -> None:
    block = "k: a: b\n" + "  more\n" * 20_000
    parsed = fm.parse_block(block)
    assert parsed.read_as == fm.DROPPED  # a quoted value continued on the next lines
    assert fm.parse_block("k: a: b\n" * 2_000).read_as == fm.QUOTED


def _read(files: dict[str, bytes]) -> tuple[list[str], list[str]]:
    refusals, warnings = Findings(), Findings()
    read_plugin(MemoryPlugin(files), refusals=refusals, warnings=warnings)
    return [f.code.name for f in refusals], [f.message for f in refusals]


def test_a_component_list_over_its_limit_is_refused_before_any_lookup() -> None:
    files = {"c/x.md": b"---\n---\n"}
    at_limit = {**files, ".claude-plugin/plugin.json": hostile_manifest(
        commands=["./c"] * 10_000)}
    assert _read(at_limit) == ([], [])
    over = {**files, ".claude-plugin/plugin.json": hostile_manifest(commands=["./c"] * 10_001)}
    assert _read(over) == (["harness.limit"], [
        ".claude-plugin/plugin.json: commands: 10001 paths, at most 10000 (real plugins name "
        "tens)"])
    missing = {**files, ".claude-plugin/plugin.json": hostile_manifest(agents=["./no.md"] * 50)}
    assert _read(missing)[0] == ["harness.path-missing"]  # named once


def _hooks(count: int) -> bytes:
    return json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "true"}] * count}]}}).encode()


def test_hook_declarations_are_counted_before_they_are_read() -> None:
    manifest = {".claude-plugin/plugin.json": hostile_manifest()}
    assert _read({**manifest, "hooks/hooks.json": _hooks(998)})[0] == []  # 998 + event + group
    codes, messages = _read({**manifest, "hooks/hooks.json": _hooks(999)})
    assert codes == ["harness.limit"] and "more than 1000" in messages[0]


def test_the_json_files_of_a_plugin_share_one_budget() -> None:
    padded = json.dumps({"description": "x" * (1 << 20), "hooks": {}}).encode()
    files = {f"h/{i}.json": padded for i in range(5)}
    files[".claude-plugin/plugin.json"] = hostile_manifest(
        hooks=[f"./h/{i}.json" for i in range(5)])
    codes, messages = _read(files)
    assert codes == ["harness.limit"] and messages[0].startswith("h/3.json: ")
    del files["h/4.json"]
    files[".claude-plugin/plugin.json"] = hostile_manifest(
        hooks=[f"./h/{i}.json" for i in range(3)])
    assert _read(files)[0] == []
