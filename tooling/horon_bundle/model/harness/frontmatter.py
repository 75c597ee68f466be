"""Markdown frontmatter read the way harness hosts read it: YAML first, then line by line.

Real plugins ship frontmatter that is not YAML (an unquoted `: ` inside a long description is
the common case). Hosts still load those files, reading `key: value` lines; so does this
reader, with a warning, never a refusal. Values are kept as written: a YAML scalar becomes a
JSON string, boolean, null or safe integer when YAML resolves it so, and its source text
otherwise (floats, dates, negative or huge integers), so the catalogue is strict JSON that
the toolchain's own reader accepts.

YAML here is PyYAML's pure-Python safe loader, about 1 MB/s, and quadratic in flow nesting
(its scanner revisits every open `[`/`{` per token: 20,000 nested brackets cost a second).
Each node costs it some 50 µs. So the work is budgeted before and while it is done
(docs/threat-model.md, "Work budgets"): a block over `MAX_FRONTMATTER_BYTES`, nesting deeper
than `MAX_DEPTH` (counted by the scanner as it opens each level, so quoting cannot hide one),
more than `MAX_NODES` nodes (counted while composing, and while walking what aliases expand
to), or met once one read's `MAX_RUN_BYTES` (of text YAML scanned) or `MAX_RUN_NODES` are
spent, is read no further: a warning naming the file, its fields unread. Each distinct block
is parsed once per `FrontmatterReader` (one read of a plugin), however many files repeat it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # yaml is imported only when a frontmatter block is parsed (start-up)
    import yaml


MAX_FRONTMATTER_BYTES = 64 << 10  # one block; a real one is a few hundred bytes
MAX_NODES = 4096  # one block's nodes, composed and walked (aliases expand a small document)
MAX_DEPTH = 16  # block indentation levels and flow levels, each
# per read of a plugin (every skill, command and agent together): about half a second of
# PyYAML each, bytes counted as far as YAML scanned them (a block refused at its 17th bracket
# costs 17; one read line by line costs all of it); a real plugin uses a few hundred bytes
# and some twenty nodes per component
MAX_RUN_BYTES = 512 << 10
MAX_RUN_NODES = 10_000
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)")
_END = re.compile(r"^(?:---|\.\.\.)[ \t]*(?=\n|\Z)", re.MULTILINE)
_MAX_SAFE = 2**53 - 1

YAML, LINE_WISE, NONE = "yaml", "line-wise", "none"


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The mapping a host sees, how it was read (yaml, line-wise, none) and why not YAML."""

    values: dict[str, Any]
    read_as: str
    problem: str | None = None

    def text(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if isinstance(value, str) and value.strip() else None


class _NotPlain(Exception):
    """YAML the catalogue cannot hold as it is: read line by line instead."""


class OverBudget(Exception):
    """Frontmatter over one of the work budgets: read no further."""


def split(text: str) -> str | None:
    """The frontmatter block of a Markdown document (None when it has none)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n") and text.rstrip("\n") != "---":
        return None
    end = _END.search(text, 4)
    if end is None:
        return None
    return text[4:end.start()]


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
        result, used, scanned = _parse(block, min(MAX_NODES, left))
        self.spent_nodes += used
        self.spent_bytes += len(block[:scanned].encode("utf-8"))
        self.parsed[key] = result
        return result


SPENT = (f"the plugin's frontmatter budget ({MAX_RUN_BYTES} bytes, {MAX_RUN_NODES} YAML nodes "
          "per read) is spent")


def parse_markdown(data: bytes) -> Frontmatter:
    """One document's frontmatter, on a reader of its own."""
    return FrontmatterReader().parse_markdown(data)


def parse_block(block: str) -> Frontmatter:
    return _parse(block, MAX_NODES)[0]


def _parse(block: str, allowance: int) -> tuple[Frontmatter, int, int]:
    """The block read within `allowance` nodes; the nodes it took (composed, or walked where
    aliases expand to more) and how many of its characters were read (as far as YAML scanned
    them; all of them when it is read line by line)."""
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if not block.strip():
        return Frontmatter({}, YAML), 0, len(block)
    composed, walked = [0, 0], [0]  # nodes composed, characters scanned; nodes walked
    try:
        node = _compose(block, allowance, composed)
        if node is None:
            return Frontmatter({}, YAML), composed[0], composed[1]
        values = _mapping(_as_mapping(node), walked, 0, allowance)
    except OverBudget as exc:
        why = SPENT if allowance < MAX_NODES and "nodes" in str(exc) else str(exc)
        return (Frontmatter({}, NONE, f"frontmatter over its budget: {why}"),
                max(composed[0], walked[0]), composed[1])
    except RecursionError:
        return (Frontmatter({}, NONE, "frontmatter over its budget: nested too deeply"),
                allowance, len(block))
    except (yaml.YAMLError, _NotPlain) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return (Frontmatter(_line_wise(block), LINE_WISE, problem[:160]), composed[0],
                len(block))  # read line by line: all of it
    return Frontmatter(values, YAML), max(composed[0], walked[0]), composed[1]


def _compose(block: str, allowance: int, composed: list[int]) -> yaml.Node | None:
    loader: Any = _bounded_loader()(block)
    loader.allowance = allowance
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        composed[0], composed[1] = loader.nodes, loader.index
        loader.dispose()


@functools.cache
def _bounded_loader() -> type[yaml.SafeLoader]:
    """The safe loader, counting its own work: indentation levels, flow levels and nodes."""
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    class BoundedLoader(yaml.SafeLoader):
        nodes = 0
        allowance = MAX_NODES

        def add_indent(self, column: int) -> bool:
            if len(self.indents) >= MAX_DEPTH and self.indent < column:
                raise OverBudget(f"indented deeper than {MAX_DEPTH} levels")
            return bool(super().add_indent(column))

        def fetch_flow_collection_start(self, TokenClass: type) -> None:  # noqa: N803 - PyYAML's name
            if self.flow_level >= MAX_DEPTH:
                raise OverBudget(f"[ and {{ nested deeper than {MAX_DEPTH}")
            super().fetch_flow_collection_start(TokenClass)

        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            self.nodes += 1
            if self.nodes > self.allowance:
                raise OverBudget(f"more than {self.allowance} YAML nodes")
            return super().compose_node(parent, index)

    return BoundedLoader


def _as_mapping(node: yaml.Node) -> yaml.MappingNode:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if not isinstance(node, yaml.MappingNode):
        raise _NotPlain("not a mapping")
    return node


def _count(budget: list[int], allowance: int) -> None:
    budget[0] += 1
    if budget[0] > allowance:
        raise OverBudget(f"more than {allowance} YAML nodes once aliases are expanded")


def _mapping(node: yaml.MappingNode, budget: list[int], depth: int,
             allowance: int) -> dict[str, Any]:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if depth > MAX_DEPTH:
        raise OverBudget(f"nested deeper than {MAX_DEPTH} once aliases are expanded")
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        _count(budget, allowance)
        if not isinstance(key_node, yaml.ScalarNode):
            raise _NotPlain("a key that is not a scalar")
        key = str(key_node.value)
        if key in result:
            raise _NotPlain(f"key {key!r} appears twice")
        result[key] = _value(value_node, budget, depth + 1, allowance)
    return result


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
    if tag == "bool":
        return bool(yaml.SafeLoader.bool_values[node.value.lower()])
    if tag == "null":
        return None
    if tag == "int":
        try:
            number = int(node.value.replace("_", ""), 0) if node.value.isascii() else None
        except ValueError:
            number = None
        if number is not None and 0 <= number <= _MAX_SAFE and node.value.isdigit():
            return number
    return str(node.value)


def _line_wise(block: str) -> dict[str, Any]:
    """`key: value` per line; a line that starts no key continues the previous value; the first
    occurrence of a key wins (later ones are ignored)."""
    parts: dict[str, list[str]] = {}  # joined at the end: appending in place is quadratic
    current: list[str] | None = None
    for line in block.split("\n"):
        match = _KEY_LINE.fullmatch(line)
        if match is not None:
            key, value = match.group(1), (match.group(2) or "").strip()
            if key in parts:
                current = None
                continue
            unquoted = _unquote(value)
            current = parts[key] = [unquoted] if unquoted else []
        elif current is not None and line.strip():
            current.append(line.strip())
    return {key: "\n".join(lines) for key, lines in parts.items()}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
