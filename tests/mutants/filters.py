"""Mutate logic, not text: the mutmut operators without the ones that only change a message.

mutmut 3.8 has no setting to leave string literals alone, so this module rewrites its operator
table in place before any mutant is generated (`install`); the mutants it drops never exist,
are never run and never count. Dropped:

- every string-literal mutant (`"x"` -> `"XXxXX"`, case changes); docstrings mutmut already
  skips;
- a call argument that is text (a literal, an f-string, a concatenation or `%`/`.format` of
  one) or that goes by a message keyword (`hint=`, `note=`, `detail=`) replaced by None or
  removed: the refusal's wording, not its code;
- `name = <text>` -> `name = None` and a lambda returning text -> None;
- a ternary choosing between two texts, forced down either branch;
- anything inside the text arguments of a call that names a refusal code (`findings.add(
  codes.X, f"{where}: {_line(exc)}")`, `Refused.one(codes.X, …)`): the message of that
  refusal, whose code is kept and mutated (`MutationVisitor` is told to skip those subtrees).

Everything else mutmut generates is kept: operators, comparisons, numbers, booleans, `not`,
`in`/`is`, break/continue, arguments that are not text (a refusal's code included), `x = None`
for any other value, ternaries choosing values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from tests.mutants.stage import MUTMUT_VERSION  # the operator table below is that version's

MESSAGE_KEYWORDS = frozenset({"hint", "note", "detail"})

Operator = Callable[[Any], Iterable[cst.CSTNode]]


def is_text(node: cst.BaseExpression) -> bool:
    """Whether `node` evaluates to text built from a literal: what a reader is shown."""
    if isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo | cst.Add):
        return is_text(node.left) or is_text(node.right)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value == "format":
        return is_text(node.func.value)
    return False


def _changed_argument(before: cst.Call, after: cst.Call) -> cst.Arg | None:
    """The argument of `before` that `after` replaced or removed (None: no single one)."""
    old, new = list(before.args), list(after.args)
    for index, arg in enumerate(old):
        if index >= len(new) or new[index] is not arg:
            return arg
    return None


def _about_text(arg: cst.Arg) -> bool:
    keyword = arg.keyword.value if arg.keyword is not None else None
    return keyword in MESSAGE_KEYWORDS or is_text(arg.value)


def arguments_but_text(original: Operator) -> Operator:
    """`operator_arg_removal` without the mutants that drop or blank a message argument."""
    def operator(node: cst.Call) -> Iterable[cst.CSTNode]:
        for mutated in original(node):
            changed = _changed_argument(node, mutated) if isinstance(mutated, cst.Call) else None
            if changed is None or not _about_text(changed):
                yield mutated
    return operator


def assignments_but_text(original: Operator) -> Operator:
    def operator(node: cst.Assign | cst.AnnAssign) -> Iterable[cst.CSTNode]:
        if node.value is not None and is_text(node.value):
            return
        yield from original(node)
    return operator


def lambdas_but_text(original: Operator) -> Operator:
    def operator(node: cst.Lambda) -> Iterable[cst.CSTNode]:
        if not is_text(node.body):
            yield from original(node)
    return operator


def ternaries_but_text(original: Operator) -> Operator:
    def operator(node: cst.IfExp) -> Iterable[cst.CSTNode]:
        if not (is_text(node.body) and is_text(node.orelse)):
            yield from original(node)
    return operator


def names_a_code(call: cst.Call) -> bool:
    """Whether one argument of `call` is a refusal code (`codes.NAME`)."""
    return any(isinstance(arg.value, cst.Attribute) and isinstance(arg.value.value, cst.Name)
               and arg.value.value.value == "codes" for arg in call.args)


def message_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    """The text arguments of a call naming a refusal code: its message."""
    if not names_a_code(call):
        return []
    return [arg.value for arg in call.args if (arg.keyword is None and is_text(arg.value))
            or (arg.keyword is not None and arg.keyword.value in MESSAGE_KEYWORDS)]


def skip_messages(visitor_class: type) -> None:
    """Make mutmut's visitor skip the message subtrees of calls that name a refusal code."""
    original = getattr(visitor_class, "_skip_node_and_children")  # noqa: B009 - mutmut private
    if getattr(original, "skips_messages", False):
        return

    def skip(self: Any, node: cst.CSTNode) -> bool:
        skipped: set[int] = self.__dict__.setdefault("_message_nodes", set())
        if id(node) in skipped:
            return True
        if isinstance(node, cst.Call):
            skipped.update(id(message) for message in message_arguments(node))
        result: bool = original(self, node)
        return result

    skip.skips_messages = True  # type: ignore[attr-defined]
    setattr(visitor_class, "_skip_node_and_children", skip)  # noqa: B010 - mutmut private


def filtered(table: list[tuple[type, Operator]]) -> list[tuple[type, Operator]]:
    """`table` (mutmut's `mutation_operators`) as this module's docstring says."""
    from mutmut.mutation import mutators  # noqa: PLC0415 - only `nox -s mutants` has mutmut

    wrappers: dict[Operator, Callable[[Operator], Operator] | None] = {
        mutators.operator_string: None,
        mutators.operator_arg_removal: arguments_but_text,
        mutators.operator_assignment: assignments_but_text,
        mutators.operator_lambda: lambdas_but_text,
        mutators.operator_if_exp: ternaries_but_text,
    }
    missing = [op.__name__ for op in wrappers if all(op is not entry for _, entry in table)]
    if missing:
        raise RuntimeError(f"mutmut's operator table lacks {missing}: is it mutmut "
                           f"{MUTMUT_VERSION}?")
    result: list[tuple[type, Operator]] = []
    for kind, entry in table:
        if entry not in wrappers:
            result.append((kind, entry))
        elif (wrap := wrappers[entry]) is not None:
            result.append((kind, wrap(entry)))
    return result


def install() -> None:
    """Filter mutmut's operator table in place (the generator reads that same list)."""
    from importlib.metadata import version  # noqa: PLC0415

    from mutmut.mutation import mutators  # noqa: PLC0415

    if version("mutmut") != MUTMUT_VERSION:
        raise RuntimeError(f"tests/mutants/filters.py is written for mutmut {MUTMUT_VERSION}, "
                           f"not {version('mutmut')}")
    from mutmut.mutation.file_mutation import MutationVisitor  # noqa: PLC0415

    table = mutators.mutation_operators
    assert isinstance(table, list)
    table[:] = filtered(table)
    skip_messages(MutationVisitor)
