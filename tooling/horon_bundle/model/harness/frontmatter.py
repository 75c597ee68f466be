"""Markdown frontmatter read the way Claude Code reads it (the pinned host, 2.1.332).

The host takes the block between the first line `---` and the next `---` (anywhere after it),
parses it as YAML, and when that fails parses it once more after double-quoting each
`key: value` line whose value holds a YAML-special character (`quote_special_values`, its
rule to the character: `description: Use this when: things happen` loads). What fails both
parses is dropped: the component loads with no frontmatter (an agent named after its file),
and `claude plugin validate` rejects it. A document that parses to something other than a
mapping is dropped the same way. So does this reader, with a YAML parser and no other
fallback: nothing is read line by line, no key is invented.

YAML is read as the host's parser reads YAML 1.2 (`model/harness/yaml12.py`: the core schema's
scalars — `yes` and `on` are strings, `0x1F` and `1.` numbers —, tabs separating within a
line, its anchors, its keys as JavaScript holds them). Values are kept as the host loads them,
written so the catalogue is strict JSON: strings, booleans, null and non-negative safe
integers as JSON, other numbers as their source text.

YAML here is PyYAML's pure-Python loader, about 1 MB/s, and quadratic in flow nesting (its
scanner revisits every open `[`/`{` per token: 20,000 nested brackets cost a second). Each
node costs it some 50 µs. So the work is budgeted before and while it is done
(docs/threat-model.md, "Work budgets"): a block over `MAX_FRONTMATTER_BYTES`, nesting deeper
than `MAX_DEPTH` (counted by the scanner as it opens each level, so quoting cannot hide one),
more than `MAX_NODES` nodes (counted while composing, and while walking what aliases expand
to), or met once one read's `MAX_RUN_BYTES` (of text YAML scanned, both parses counted) or
`MAX_RUN_NODES` are spent, is read no further: a warning naming the file, its fields unread.
Each distinct block is parsed once per `FrontmatterReader` (one read of a plugin).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from horon_bundle.model.harness.yaml12 import MAX_DEPTH, MAX_NODES, OverBudget, bounded_loader

if TYPE_CHECKING:  # yaml is imported only when a frontmatter block is parsed (start-up)
    import yaml


MAX_FRONTMATTER_BYTES = 64 << 10  # one block; a real one is a few hundred bytes
# per read of a plugin (every skill, command and agent together): about half a second of
# PyYAML each, bytes counted as far as YAML scanned them (a block refused at its 17th bracket
# costs 17; a block parsed twice costs both); a real plugin uses a few hundred bytes and some
# twenty nodes per component
MAX_RUN_BYTES = 512 << 10
MAX_RUN_NODES = 10_000
_MAX_SAFE = 2**53 - 1
# the host's block: `^---\s*\n([\s\S]*?)---\s*\n?` after a byte order mark is dropped
_BLOCK = re.compile(r"---[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
                    r"\ufeff]*\n(.*?)---", re.DOTALL)
# its second chance, line by line: `key: value` with a key of letters, `_` and `-` only
_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_KEY_VALUE = re.compile(rf"([a-zA-Z_-]+):[{_SPACE}]+([^{_SPACE}][^\n\r\u2028\u2029]*)")
_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_LEADING_TABS = re.compile(r"(?:^|(?<=[\n\r\u2028\u2029]))\t+")

YAML, QUOTED, DROPPED, NONE = "yaml", "yaml-quoted", "dropped", "none"
__all__ = ["DROPPED", "MAX_DEPTH", "MAX_FRONTMATTER_BYTES", "MAX_NODES", "MAX_RUN_BYTES",
           "MAX_RUN_NODES", "NONE", "QUOTED", "SPENT", "YAML", "Frontmatter", "FrontmatterReader",
           "OverBudget", "parse_block", "parse_markdown", "quote_special_values", "split"]


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The mapping the host loads, how it was read (yaml, yaml-quoted: on the host's second
    parse, dropped: by the host, none: not read here), and why it is not plain YAML."""

    values: dict[str, Any]
    read_as: str
    problem: str | None = None

    def text(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if isinstance(value, str) and value.strip() else None


def split(text: str) -> str | None:
    """The frontmatter block of a Markdown document, as the host cuts it (None: it has none).
    Line ends are kept as written: the host does not fold `\\r\\n`."""
    text = text.removeprefix("\ufeff")
    found = _BLOCK.match(text)  # prefix match: the block opens the document
    return found.group(1) if found is not None else None


def quote_special_values(block: str, is_sequence: Any = None) -> str:
    """The host's second chance at a block: each line `key: value` (a key of ASCII letters,
    `_` and `-`) whose value is not already quoted, is not a flow sequence, and holds one of
    `{}[]*&#!|>%@` or a backtick or `: `, becomes `key: "value"` with `\\` and `"` escaped;
    then every tab leading a line becomes two spaces. A line ending in `\\r`, an indented
    line, a continuation line are left as they are."""
    lines = []
    for line in block.split("\n"):
        found = _KEY_VALUE.fullmatch(line)
        written = line
        if found is not None:
            key, value = found.groups()
            quoted = (value[0] == value[-1] == '"') or (value[0] == value[-1] == "'")
            listed = (value.startswith("[") and value.endswith("]") and is_sequence is not None
                      and is_sequence(value))
            if not quoted and not listed and _SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                written = f'{key}: "{escaped}"'
        lines.append(written)
    return _LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), "\n".join(lines))


@dataclass(slots=True)
class _Work:
    """What one block's reading cost: nodes composed or walked, characters YAML scanned."""

    allowance: int
    nodes: int = 0
    scanned: int = 0


@dataclass(slots=True)
class FrontmatterReader:
    """Frontmatter of one read of a plugin: each distinct block parsed once (by its digest),
    all of them together within `MAX_RUN_BYTES` and `MAX_RUN_NODES`."""

    spent_bytes: int = 0
    spent_nodes: int = 0
    parsed: dict[bytes, Frontmatter] = field(default_factory=dict)

    def parse_markdown(self, data: bytes) -> Frontmatter:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Frontmatter({}, NONE, f"not UTF-8 (byte {exc.start})")
        block = split(text)
        if block is None:
            return Frontmatter({}, NONE, "no frontmatter block (--- … ---)")
        encoded = block.encode("utf-8")
        if len(encoded) > MAX_FRONTMATTER_BYTES:
            return Frontmatter({}, NONE, f"frontmatter over {MAX_FRONTMATTER_BYTES} bytes")
        key = hashlib.sha256(encoded).digest()
        known = self.parsed.get(key)
        if known is not None:
            return known
        left = MAX_RUN_NODES - self.spent_nodes
        if self.spent_bytes >= MAX_RUN_BYTES or left <= 0:
            return Frontmatter({}, NONE, SPENT)
        work = _Work(min(MAX_NODES, left))
        result = _parse(block, work)
        self.spent_nodes += work.nodes
        self.spent_bytes += work.scanned
        self.parsed[key] = result
        return result


SPENT = (f"the plugin's frontmatter budget ({MAX_RUN_BYTES} bytes, {MAX_RUN_NODES} YAML nodes "
          "per read) is spent")


def parse_markdown(data: bytes) -> Frontmatter:
    """One document's frontmatter, on a reader of its own."""
    return FrontmatterReader().parse_markdown(data)


def parse_block(block: str) -> Frontmatter:
    return _parse(block, _Work(MAX_NODES))


def _parse(block: str, work: _Work) -> Frontmatter:
    """The block as the host loads it, within `work`'s allowance (what it cost goes there)."""
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    try:
        try:
            return _loaded(block, work, YAML)
        except yaml.YAMLError:
            pass
        second = quote_special_values(block, lambda value: _is_sequence(value, work))
        try:
            return _loaded(second, work, QUOTED)
        except yaml.YAMLError as exc:
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return Frontmatter({}, DROPPED, f"not YAML, not even with its `key: value` lines "
                                            f"quoted as the host quotes them: {problem[:160]}")
    except OverBudget as exc:
        why = SPENT if work.allowance < MAX_NODES and "nodes" in str(exc) else str(exc)
        return Frontmatter({}, NONE, f"frontmatter over its budget: {why}")
    except RecursionError:
        work.nodes = work.allowance
        return Frontmatter({}, NONE, "frontmatter over its budget: nested too deeply")


def _loaded(text: str, work: _Work, read_as: str) -> Frontmatter:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    node = _compose(text, work)
    if node is None:
        return Frontmatter({}, read_as)
    if not isinstance(node, yaml.MappingNode):
        what = "a list" if isinstance(node, yaml.SequenceNode) else "a single value"
        return Frontmatter({}, DROPPED, f"{what}, not a mapping of `key: value`")
    walked = [0]
    values = _mapping(node, walked, 0, work.allowance)
    work.nodes = max(work.nodes, walked[0])
    return Frontmatter(values, read_as)


def _is_sequence(value: str, work: _Work) -> bool:
    """Whether a `[ … ]` value alone is a YAML sequence (the host leaves those unquoted)."""
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    try:
        return isinstance(_compose(value, work), yaml.SequenceNode)
    except yaml.YAMLError:
        return False


def _compose(text: str, work: _Work) -> yaml.Node | None:
    loader: Any = bounded_loader()(text)
    loader.allowance = work.allowance
    loader.nodes = work.nodes
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        work.nodes, work.scanned = loader.nodes, work.scanned + loader.index
        loader.dispose()


def _count(budget: list[int], allowance: int) -> None:
    budget[0] += 1
    if budget[0] > allowance:
        raise OverBudget(f"more than {allowance} YAML nodes once aliases are expanded")


def _mapping(node: yaml.MappingNode, budget: list[int], depth: int,
             allowance: int) -> dict[str, Any]:
    """A mapping as the host loads it: keys as written, the last of two equal keys wins."""

    if depth > MAX_DEPTH:
        raise OverBudget(f"nested deeper than {MAX_DEPTH} once aliases are expanded")
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        _count(budget, allowance)
        key = _key(key_node)
        result.pop(key, None)  # the last one wins, in its place
        result[key] = _value(value_node, budget, depth + 1, allowance)
    return result


def _key(node: yaml.Node) -> str:
    """A key as the host's JavaScript object holds it: a scalar's text, a list's items joined
    by `,` (a list's own text in JavaScript), `[object Object]` for a mapping."""
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if isinstance(node, yaml.ScalarNode):
        return "" if node.tag.endswith(":null") else str(node.value)
    if isinstance(node, yaml.SequenceNode):
        return ",".join(_key(item) for item in node.value)
    return "[object Object]"


def _value(node: yaml.Node, budget: list[int], depth: int, allowance: int) -> Any:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    _count(budget, allowance)
    if isinstance(node, yaml.MappingNode):
        return _mapping(node, budget, depth, allowance)
    if isinstance(node, yaml.SequenceNode):
        if depth > MAX_DEPTH:
            raise OverBudget(f"nested deeper than {MAX_DEPTH} once aliases are expanded")
        return [_value(item, budget, depth + 1, allowance) for item in node.value]
    assert isinstance(node, yaml.ScalarNode)
    tag = node.tag.rsplit(":", 1)[-1]
    text = str(node.value)
    if tag == "bool" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if tag == "null":
        return None
    if tag == "int" and text.isascii() and text.isdigit() and int(text) <= _MAX_SAFE:
        return int(text)
    return text
