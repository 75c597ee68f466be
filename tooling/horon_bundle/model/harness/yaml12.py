"""PyYAML's safe loader reading YAML 1.2 as Claude Code's parser (Bun's) reads it, and counting
its own work for the frontmatter reader's budgets (model/harness/frontmatter.py).

Where PyYAML reads YAML 1.1 more narrowly than the host, this loader reads as the host does
(each difference asked of the pinned host, tests/model/test_harness_frontmatter.py):

- plain scalars resolve by the 1.2 core schema (`yes`, `on`, `2024-01-01` are strings);
- a tab separates within a line as a space does — after a value, between `:` and a value,
  inside a plain scalar, leading a continuation line's content — but never indents a line;
- an anchor's name is any run of characters but spaces and flow indicators (`&12\\`);
- a plain scalar may start with `,` outside flow collections.

The budgets: indentation levels and flow levels (`MAX_DEPTH` each, counted as the scanner opens
them, so quoting hides none) and nodes composed (`allowance`, at most `MAX_NODES`).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # yaml is imported only when a frontmatter block is parsed (start-up)
    import yaml

MAX_NODES = 4096  # one block's nodes, composed and walked (aliases expand a small document)
MAX_DEPTH = 16  # block indentation levels and flow levels, each
_BREAKS = "\r\n\x85\u2028\u2029"


class OverBudget(Exception):
    """Frontmatter over one of the work budgets: read no further."""


@functools.cache
def bounded_loader() -> type[yaml.SafeLoader]:
    """The loader class (made once: yaml is imported only when frontmatter is parsed)."""
    import yaml  # noqa: PLC0415 - start-up: only harness bundles need it

    class BoundedLoader(yaml.SafeLoader):
        nodes = 0
        allowance = MAX_NODES
        yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 - PyYAML's class table

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

        def fetch_flow_entry(self) -> None:
            if not self.flow_level:  # a `,` outside [ ] and { } starts a plain scalar
                self.fetch_plain()
                return
            super().fetch_flow_entry()

        def scan_to_next_token(self) -> None:
            if self.index == 0 and self.peek() == "\ufeff":
                self.forward()
            indenting = self.column == 0
            while True:
                while self.peek() == " " or (self.peek() == "\t" and not indenting):
                    self.forward()
                if self.peek() == "\t":  # a tab leading a line: blank, or the parser's error
                    length = 0
                    while self.peek(length) in " \t":
                        length += 1
                    if self.peek(length) in "\0#" + _BREAKS:
                        self.forward(length)
                if self.peek() == "#":
                    while self.peek() not in "\0" + _BREAKS:
                        self.forward()
                if not self.scan_line_break():  # type: ignore[no-untyped-call]
                    return
                indenting = True
                if not self.flow_level:
                    self.allow_simple_key = True

        def scan_plain_spaces(self, indent: int, start_mark: Any) -> list[str] | None:
            """PyYAML's, with a tab wherever a space separates (its own forbids tabs)."""
            length = 0
            while self.peek(length) in " \t":
                length += 1
            whitespaces = self.prefix(length)
            self.forward(length)
            if self.peek() not in _BREAKS:
                return [whitespaces] if whitespaces else []
            line_break: str = self.scan_line_break()  # type: ignore[no-untyped-call]
            self.allow_simple_key = True
            if self.prefix(3) in ("---", "...") and self.peek(3) in "\0 \t" + _BREAKS:
                return None
            breaks = []
            while self.peek() in " \t" + _BREAKS:
                if self.peek() in " \t":
                    self.forward()
                    continue
                breaks.append(self.scan_line_break())  # type: ignore[no-untyped-call]
                if self.prefix(3) in ("---", "...") and self.peek(3) in "\0 \t" + _BREAKS:
                    return None
            chunks = [line_break] if line_break != "\n" else [] if breaks else [" "]
            return chunks + breaks

        def scan_anchor(self, TokenClass: type) -> Any:  # noqa: N803 - PyYAML's name
            start_mark = self.get_mark()
            self.forward()
            length = 0
            while self.peek(length) not in "\0 \t,[]{}" + _BREAKS:
                length += 1
            if not length:
                raise yaml.scanner.ScannerError("while scanning an anchor or alias",
                                                start_mark, "expected its name",
                                                self.get_mark())
            value = self.prefix(length)
            self.forward(length)
            return TokenClass(value, start_mark, self.get_mark())

    core = {
        "bool": (r"true|True|TRUE|false|False|FALSE", "tTfF"),
        "null": (r"~|null|Null|NULL|", ["~", "n", "N", ""]),
        "int": (r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
        "float": (r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                  r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)", "-+.0123456789"),
    }
    for name, (pattern, first) in core.items():
        BoundedLoader.add_implicit_resolver(f"tag:yaml.org,2002:{name}",
                                            re.compile(rf"(?:{pattern})\Z"), list(first))
    return BoundedLoader
