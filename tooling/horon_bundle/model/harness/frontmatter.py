"""Markdown frontmatter read the way harness hosts read it: YAML first, then line by line.

Real plugins ship frontmatter that is not YAML (an unquoted `: ` inside a long description is
the common case). Hosts still load those files, reading `key: value` lines; so does this
reader, with a warning, never a refusal. Values are kept as written: a YAML scalar becomes a
JSON string, boolean, null or safe integer when YAML resolves it so, and its source text
otherwise (floats, dates, negative or huge integers), so the catalogue is strict JSON that
the toolchain's own reader accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # yaml is imported only when a frontmatter block is parsed (start-up)
    import yaml


MAX_FRONTMATTER_BYTES = 64 << 10
MAX_NODES = 4096  # aliases can make a small document expand exponentially; never walk that
MAX_DEPTH = 16
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)")
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
    pass


def split(text: str) -> str | None:
    """The frontmatter block of a Markdown document (None when it has none)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n") and text.rstrip("\n") != "---":
        return None
    end = re.search(r"^(?:---|\.\.\.)[ \t]*(?=\n|\Z)", text[4:], re.MULTILINE)
    if end is None:
        return None
    return text[4:4 + end.start()]


def parse_markdown(data: bytes) -> Frontmatter:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Frontmatter({}, NONE, f"not UTF-8 (byte {exc.start})")
    block = split(text)
    if block is None:
        return Frontmatter({}, NONE, "no frontmatter block (--- … ---)")
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        return Frontmatter({}, NONE, f"frontmatter over {MAX_FRONTMATTER_BYTES} bytes")
    return parse_block(block)


def parse_block(block: str) -> Frontmatter:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if not block.strip():
        return Frontmatter({}, YAML)
    try:
        node = yaml.compose(block, Loader=yaml.SafeLoader)
        if node is None:
            return Frontmatter({}, YAML)
        values = _mapping(_as_mapping(node), [0], 0)
    except (yaml.YAMLError, _NotPlain, RecursionError) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Frontmatter(_line_wise(block), LINE_WISE, problem[:160])
    return Frontmatter(values, YAML)


def _as_mapping(node: yaml.Node) -> yaml.MappingNode:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if not isinstance(node, yaml.MappingNode):
        raise _NotPlain("not a mapping")
    return node


def _count(budget: list[int]) -> None:
    budget[0] += 1
    if budget[0] > MAX_NODES:
        raise _NotPlain(f"more than {MAX_NODES} YAML nodes (aliases?)")


def _mapping(node: yaml.MappingNode, budget: list[int], depth: int) -> dict[str, Any]:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    if depth > MAX_DEPTH:
        raise _NotPlain(f"nested deeper than {MAX_DEPTH}")
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        _count(budget)
        if not isinstance(key_node, yaml.ScalarNode):
            raise _NotPlain("a key that is not a scalar")
        key = str(key_node.value)
        if key in result:
            raise _NotPlain(f"key {key!r} appears twice")
        result[key] = _value(value_node, budget, depth + 1)
    return result


def _value(node: yaml.Node, budget: list[int], depth: int) -> Any:
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    _count(budget)
    if isinstance(node, yaml.MappingNode):
        return _mapping(node, budget, depth)
    if isinstance(node, yaml.SequenceNode):
        if depth > MAX_DEPTH:
            raise _NotPlain(f"nested deeper than {MAX_DEPTH}")
        return [_value(item, budget, depth + 1) for item in node.value]
    assert isinstance(node, yaml.ScalarNode)
    tag = node.tag.rsplit(":", 1)[-1]
    if tag == "bool":
        return bool(yaml.SafeLoader(node.value).construct_yaml_bool(node))
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
    values: dict[str, Any] = {}
    current: str | None = None
    for line in block.split("\n"):
        match = _KEY_LINE.fullmatch(line)
        if match is not None:
            key, value = match.group(1), (match.group(2) or "").strip()
            if key in values:
                current = None
                continue
            values[key] = _unquote(value)
            current = key
        elif current is not None and line.strip():
            previous = values[current]
            values[current] = f"{previous}\n{line.strip()}" if previous else line.strip()
    return values


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
