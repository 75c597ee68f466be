"""Frontmatter read as Claude Code 2.1.332 reads it, each step from both sides: the block the
host cuts, the first YAML parse, the second after the host's quoting, what is dropped, the
scalars of YAML 1.2, and the fields the host types (model/harness/frontmatter*.py). What the
host itself says of each is asserted by tests/verify/test_host_differential.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.model.harness import frontmatter as fm
from horon_bundle.model.harness.frontmatter_fields import judge_fields


def _read(block: str) -> fm.Frontmatter:
    return fm.parse_markdown(("---\n" + block + "---\nbody\n").encode())


@pytest.mark.parametrize(("block", "read_as", "values"), [
    # the first parse: plain YAML
    ("name: a\ndescription: Use this agent when x\n", fm.YAML,
     {"name": "a", "description": "Use this agent when x"}),
    ("name: a\ndescription: use # this\n", fm.YAML, {"name": "a", "description": "use"}),
    ("name: a\ndescription: x\ndescription: y\n", fm.YAML, {"name": "a", "description": "y"}),
    # the second: `key: value` lines quoted as the host quotes them
    ("name: a\ndescription: Use this when: things happen\n", fm.QUOTED,
     {"name": "a", "description": "Use this when: things happen"}),
    ("description: say \"hi\": now\n", fm.QUOTED, {"description": 'say "hi": now'}),
    ("description: a\\b: c\n", fm.QUOTED, {"description": "a\\b: c"}),
    ("description: *bold* text\n", fm.QUOTED, {"description": "*bold* text"}),
    ("name: a\ntools: [Read\n", fm.QUOTED, {"name": "a", "tools": "[Read"}),
    ("d: x: y\ntools: [Read, Grep]\n", fm.QUOTED, {"d": "x: y", "tools": ["Read", "Grep"]}),
    ("description: ok\nmeta:\n\tx: 1\n", fm.QUOTED, {"description": "ok", "meta": {"x": 1}}),
    # dropped: neither parse reads it
    ("name: a\ndescription: Use it. Examples:\n\nContext: the user\nuser: \"hi\"\n"
     "assistant: \"ho\"\n<example>x</example>\n", fm.DROPPED, {}),
    ("x1: a: b\n", fm.DROPPED, {}),  # a key with a digit is never quoted
    ("x.y: a: b\n", fm.DROPPED, {}),
    ("description: first: line\n  continued: here\n", fm.DROPPED, {}),
    ("- a\n- b\n", fm.DROPPED, {}),
    ("just text\n", fm.DROPPED, {}),
    # nothing to read
    ("", fm.YAML, {}),
    ("# a comment\n", fm.YAML, {}),
])
def test_the_hosts_two_parses(block: str, read_as: str, values: dict[str, object]) -> None:
    parsed = _read(block)
    assert (parsed.read_as, parsed.values) == (read_as, values)
    assert (parsed.problem is not None) == (read_as == fm.DROPPED)


def test_no_line_is_read_on_its_own_and_no_key_is_invented() -> None:
    parsed = _read("name: code-simplifier\ndescription: Use this agent: it simplifies\n"
                   "Context: more text\nuser: \"hi\"\nassistant: \"ho\"\n  indented: x\n")
    assert parsed.read_as == fm.DROPPED and parsed.values == {}


def test_the_block_is_cut_where_the_host_cuts_it() -> None:
    cut = fm.parse_markdown(b"---\nname: a\ndescription: x---y\n---\nbody\n")
    assert cut.values == {"name": "a", "description": "x"}  # the first --- anywhere
    bom = fm.parse_markdown("\ufeff---\nname: a\n---\n".encode())
    assert bom.values == {"name": "a"}
    assert fm.parse_markdown(b"--- \n\nname: a\n---\n").values == {"name": "a"}
    for text in (b"# title\n", b"---\nname: a\n", b"----\nname: a\n---\n", b"x\n---\na: b\n---\n"):
        assert fm.parse_markdown(text).read_as == fm.NONE


def test_crlf_lines_are_not_quoted_as_the_host_does_not_quote_them() -> None:
    plain = fm.parse_markdown(b"---\r\nname: a\r\ndescription: x\r\n---\r\nbody\r\n")
    assert plain.values == {"name": "a", "description": "x"}
    colon = fm.parse_markdown(b"---\r\nname: a\r\ndescription: x: y\r\n---\r\nbody\r\n")
    assert colon.read_as == fm.DROPPED


def test_the_hosts_quoting_to_the_character() -> None:
    quote = fm.quote_special_values
    assert quote("k: a: b") == 'k: "a: b"'
    assert quote("k: a:b") == "k: a:b"  # `:` without a space is no indicator
    assert quote('k: "a: b"') == 'k: "a: b"' and quote("k: 'a: b'") == "k: 'a: b'"
    assert quote('k: say "x" & y') == 'k: "say \\"x\\" & y"'
    assert quote("k: C:\\dir: x") == 'k: "C:\\\\dir: x"'
    for special in "{}[]*&#!|>%@`":
        assert quote(f"k: a {special} b") == f'k: "a {special} b"'
    assert quote("k: [a, b]", lambda value: True) == "k: [a, b]"
    assert quote("k: [a, b]", lambda value: False) == 'k: "[a, b]"'
    assert quote("k1: a: b") == "k1: a: b" and quote("  k: a: b") == "  k: a: b"
    assert quote("k: a: b\r") == "k: a: b\r"
    assert quote("a:\n\t\tb: 1") == "a:\n    b: 1"


@pytest.mark.parametrize(("block", "values"), [
    ("a: b\t\n", {"a": "b"}), ("a:\tb\n", {"a": "b"}), ("a: b\tc\n", {"a": "b\tc"}),
    ("a: b\t c\n", {"a": "b\t c"}), ("a: b\t# c\n", {"a": "b"}), ("color: \t", {"color": None}),
    ("a: b\t\n  c\n", {"a": "b c"}), ("a: b\n  \ttrue\n", {"a": "b true"}),
    ("a: b\n\t\n", {"a": "b"}), ("a: &12\\ when\n", {"a": "when"}),
    ("a: &x b\nc: *x\n", {"a": "b", "c": "b"}), ("x1: ,x\n", {"x1": ",x"}),
    ("x1:\n  - ,a\n", {"x1": [",a"]}), ("x1: [a, b]\n", {"x1": ["a", "b"]}),
    ("[a]: v\n", {"a": "v"}), ("[a, b]: v\n", {"a,b": "v"}),
    ("{a: 1}: v\n", {"[object Object]": "v"}),
])
def test_yaml_as_the_hosts_parser_reads_it(block: str, values: dict[str, object]) -> None:
    """Tabs separating within a line, anchors of any name, `,` starting a plain scalar, keys
    as JavaScript holds them: each read as Claude Code's parser (Bun's YAML 1.2) reads it."""
    parsed = fm.parse_block(block)
    assert (parsed.read_as, parsed.values) == (fm.YAML, values)


@pytest.mark.parametrize("block", ["x1: ,x: y\n", "a:\n\tb: 1\n\tc: 2: 3\n", "x1: ]x\n"])
def test_what_the_hosts_parser_refuses_too(block: str) -> None:
    assert fm.parse_block(block).read_as == fm.DROPPED


def test_scalars_resolve_as_yaml_1_2() -> None:
    parsed = fm.parse_block(
        "a: yes\nb: on\nc: True\nd: tRUE\ne: 0o17\nf: 017\ng: 0x1F\nh: 1_000\ni: .inf\n"
        "j: 1e3\nk: 2024-01-01\nl: +1\nm: ~\nn: Null\no: nULL\np: 12:30\nq: 0b11\nr: -0\ns:\n"
        f"t: {2**53}\nu: {2**53 - 1}\n")
    assert parsed.values == {
        "a": "yes", "b": "on", "c": True, "d": "tRUE", "e": "0o17", "f": 17, "g": "0x1F",
        "h": "1_000", "i": ".inf", "j": "1e3", "k": "2024-01-01", "l": "+1", "m": None,
        "n": None, "o": "nULL", "p": "12:30", "q": "0b11", "r": "-0", "s": None,
        "t": str(2**53), "u": 2**53 - 1}


@pytest.mark.parametrize(("kind", "values", "kept", "rejected", "ignored"), [
    ("agents", {"name": 12, "description": "d"}, {"description": "d"}, 1, 0),
    ("agents", {"name": None, "description": None}, {"name": None, "description": None}, 0, 0),
    ("skills", {"description": ["a"]}, {}, 1, 0),
    ("commands", {"description": 12, "model": 3}, {"description": 12, "model": 3}, 0, 0),
    ("commands", {"allowed-tools": [1]}, {}, 1, 0),
    ("agents", {"allowed-tools": "Read, Bash"}, {"allowed-tools": "Read, Bash"}, 0, 0),
    ("commands", {"shell": "zsh"}, {}, 1, 0),
    ("agents", {"shell": "zsh"}, {"shell": "zsh"}, 0, 0),  # an agent has no shell field
    ("skills", {"metadata": 3}, {}, 0, 1),
    ("agents", {"metadata": 3}, {"metadata": 3}, 0, 0),
])
def test_the_fields_the_host_types(kind: str, values: dict[str, object], kept: dict[str, object],
                                   rejected: int, ignored: int) -> None:
    judged = judge_fields(values, kind)
    assert judged.values == kept
    assert (len(judged.rejected), len(judged.ignored)) == (rejected, ignored)


@given(st.text(max_size=300))
def test_any_text_reads_without_raising(text: str) -> None:
    parsed = fm.parse_markdown(("---\n" + text + "\n---\n").encode("utf-8", "surrogatepass"))
    json.dumps(parsed.values)  # always JSON
    assert parsed.read_as in (fm.YAML, fm.QUOTED, fm.DROPPED, fm.NONE)


@given(st.lists(st.sampled_from(["k: ", "x", ": ", "\"", "'", "#", "[", "]", "\t", "\n", "\\",
                                 "-", " ", "a", "{", "*", "\r"]), max_size=40))
def test_the_quoting_keeps_every_line_and_changes_only_key_value_lines(parts: list[str]) -> None:
    block = "".join(parts)
    quoted = fm.quote_special_values(block)
    assert quoted.count("\n") == block.count("\n")
    for before, after in zip(block.split("\n"), quoted.split("\n"), strict=True):
        tabs = len(before) - len(before.lstrip("\t"))
        plain = "  " * tabs + before[tabs:]
        key, _, value = before.partition(": ")
        escaped = value.lstrip(" \t\r").replace("\\", "\\\\").replace('"', '\\"')
        assert after in (plain, f'{key}: "{escaped}"')


@pytest.mark.parametrize(("values", "kind", "judged"), [
    ({"allowed-tools": ["Bash", "Read"], "shell": "bash", "name": "n"}, "skills",
     ({"allowed-tools": ["Bash", "Read"], "shell": "bash", "name": "n"}, (), (), ())),
    ({"shell": 3, "description": ["d"], "x": 1}, "commands", ({"x": 1},
     ("shell must be a string, got a number", "description must be a string, got a list"),
     (), ("shell", "description"))),
    ({"metadata": [1], "description": {"a": 1}}, "skills", ({},
     ("description must be a string, got a mapping",),
     ("metadata must be a mapping, got a list: the host drops it at load",),
     ("metadata", "description"))),
    ({"shell": 3, "metadata": [1]}, "agents", ({"shell": 3, "metadata": [1]}, (), (), ())),
])
def test_judged_fields_name_each_problem_and_field(
        values: dict[str, object], kind: str,
        judged: tuple[dict[str, object], tuple[str, ...], tuple[str, ...], tuple[str, ...]],
) -> None:
    found = judge_fields(values, kind)
    assert (found.values, found.rejected, found.ignored, found.dropped) == judged


@pytest.mark.parametrize(("block", "values", "read_as"), [
    ("x: [a]]\n", {"x": "[a]]"}, fm.QUOTED),  # not a sequence alone: quoted
    ("null: a\n~: b\n", {"": "b"}, fm.YAML),  # a null key is the empty key
    ("x: !foo bar\n", {"x": "bar"}, fm.YAML),  # a tag of no namespace
])
def test_blocks_load_as_the_host_loads_them(block: str, values: dict[str, object],
                                            read_as: str) -> None:
    assert fm.parse_block(block) == fm.Frontmatter(values, read_as)


def test_the_last_of_two_equal_keys_wins_in_its_place() -> None:
    assert list(fm.parse_block("a: 1\nb: 2\na: 3\n").values.items()) == [("b", 2), ("a", 3)]


@pytest.mark.parametrize(("data", "problem"), [
    (b"\xff", "not UTF-8 (byte 0)"), (b"no block", "no frontmatter block (--- \u2026 ---)"),
    (b"---\nx: " + b"a" * (64 << 10) + b"\n---\n", "frontmatter over 65536 bytes"),
])
def test_what_is_not_read_says_why(data: bytes, problem: str) -> None:
    assert fm.parse_markdown(data) == fm.Frontmatter({}, fm.NONE, problem)


@pytest.mark.parametrize(("block", "problem"), [
    ("- a\n- b\n", "a list, not a mapping of `key: value`"),
    ("just text\n", "a single value, not a mapping of `key: value`"),
    ("x: 'unterminated\n", "not YAML, not even with its `key: value` lines quoted as the host "
                           "quotes them: while scanning a quoted scalar"),
])
def test_what_the_host_drops_says_why(block: str, problem: str) -> None:
    assert fm.parse_block(block) == fm.Frontmatter({}, fm.DROPPED, problem)


def test_the_run_budget_is_spent_at_its_limits() -> None:
    block = b"---\na: b\n---\n"
    spent = fm.FrontmatterReader(spent_bytes=fm.MAX_RUN_BYTES)
    assert spent.parse_markdown(block) == fm.Frontmatter({}, fm.NONE, fm.SPENT)
    spent = fm.FrontmatterReader(spent_nodes=fm.MAX_RUN_NODES)
    assert spent.parse_markdown(block) == fm.Frontmatter({}, fm.NONE, fm.SPENT)
    last = fm.FrontmatterReader(spent_nodes=fm.MAX_RUN_NODES - 1)  # one node left: not enough
    assert last.parse_markdown(block) == fm.Frontmatter(
        {}, fm.NONE, f"frontmatter over its budget: {fm.SPENT}")
    assert fm.FrontmatterReader(spent_bytes=fm.MAX_RUN_BYTES - 1).parse_markdown(
        block).values == {"a": "b"}


def test_aliases_expand_up_to_the_node_and_depth_limits() -> None:
    def copies(items: int, aliases: int) -> str:  # (items + 2) * (aliases + 1) nodes
        return ("a: &a [" + ",".join(["1"] * items) + "]\n"
                + "".join(f"b{i}: *a\n" for i in range(aliases)))

    assert fm.parse_block(copies(62, 63)).read_as == fm.YAML  # 4,096 nodes
    assert fm.parse_block(copies(15, 240)).problem == (
        "frontmatter over its budget: more than 4096 YAML nodes once aliases are expanded")

    def chain(depth: int, opening: str, closing: str) -> str:
        return f"x0: &a0 {opening}1{closing}\n" + "".join(
            f"x{i}: &a{i} {opening}*a{i - 1}{closing}\n" for i in range(1, depth + 1))

    deeper = "frontmatter over its budget: nested deeper than 16 once aliases are expanded"
    for opening, closing in (("{v: ", "}"), ("[", "]")):
        assert fm.parse_block(chain(15, opening, closing)).read_as == fm.YAML
        assert fm.parse_block(chain(16, opening, closing)).problem == deeper


def test_a_text_field_is_a_string_with_text() -> None:
    loaded = fm.Frontmatter({"name": "n", "blank": "  ", "number": 3}, fm.YAML)
    assert [loaded.text(key) for key in ("name", "blank", "number", "absent")] == [
        "n", None, None, None]
