"""What a Python hook answers: every value its `permissionDecision` key is given, followed
through the names that carry it.

A Python hook sets the key in a dict literal, a subscript, `dict(permissionDecision=…)` or
`.setdefault`; each value is resolved to the strings it can be — a constant (folded, so
`"a" + "sk"` is `ask`), either branch of `x if c else y`, and through a name to every value
assigned to it anywhere in the file, or passed for it where it is a function's parameter.
A value that resolves to no constant (`sys.argv[1]`, a function's result) is made at run time:
lint says it cannot judge the answer, whatever literals the file holds besides. Flow-blind
and best effort: a name is everything it is ever bound to.
"""

from __future__ import annotations

import ast

from horon_bundle.rules.harness_reads import Reads

KEY = "permissionDecision"
MAX_RESOLVE = 8  # names followed through names at most this deep


def python_answers(nodes: list[ast.AST], folded: dict[int, str], reads: Reads) -> None:
    """Record in `reads` the values the key is set to, and whether one is made at run time."""
    values = list(_values(nodes, folded))
    if not values:
        return
    resolver = _Resolver(nodes, folded)
    for value in values:
        resolved = resolver.resolve(value, 0)
        if resolved is None:
            reads.answer_computed = True
        else:
            reads.answers |= resolved


def _values(nodes: list[ast.AST], folded: dict[int, str]) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in nodes:
        if isinstance(node, ast.Dict):
            found += [v for k, v in zip(node.keys, node.values, strict=True)
                      if k is not None and folded.get(id(k)) == KEY]
        elif isinstance(node, ast.keyword) and node.arg == KEY:
            found.append(node.value)
        elif isinstance(node, ast.Assign):
            found += [node.value for target in node.targets
                      if isinstance(target, ast.Subscript) and folded.get(id(target.slice)) == KEY]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "setdefault" and len(node.args) == 2 \
                and folded.get(id(node.args[0])) == KEY:
            found.append(node.args[1])
    return found


class _Resolver:
    def __init__(self, nodes: list[ast.AST], folded: dict[int, str]) -> None:
        self.folded = folded
        self.bound: dict[str, list[ast.expr | None]] = {}  # None: bound to the unknown
        self.params: dict[str, list[tuple[str, int, ast.expr | None]]] = {}
        self.calls: dict[str, list[ast.Call]] = {}
        self.memo: dict[str, set[str] | None] = {}
        for node in nodes:
            self._note(node)

    def _bind(self, name: str, value: ast.expr | None) -> None:
        self.bound.setdefault(name, []).append(value)

    def _note(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _names(target):
                    self._bind(name, node.value if isinstance(target, ast.Name) else None)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target,
                                                                              ast.Name):
            self._bind(node.target.id, node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
            for name in _names(node.target):
                self._bind(name, None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for name in _names(node.optional_vars):
                self._bind(name, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*node.args.posonlyargs, *node.args.args]
            defaults = [None] * (len(arguments) - len(node.args.defaults)) + node.args.defaults
            for index, (argument, default) in enumerate(zip(arguments, defaults, strict=True)):
                self.params.setdefault(argument.arg, []).append((node.name, index, default))
            for extra in (*node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
                if extra is not None:
                    self._bind(extra.arg, None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            self.calls.setdefault(node.func.id, []).append(node)

    def resolve(self, node: ast.expr | None, depth: int) -> set[str] | None:
        """The strings `node` can be, or None when one of them is made at run time."""
        if node is None or depth > MAX_RESOLVE:
            return None
        value = self.folded.get(id(node))
        if value is not None:
            return {value}
        if isinstance(node, ast.IfExp):
            return _union([self.resolve(node.body, depth + 1),
                           self.resolve(node.orelse, depth + 1)])
        if isinstance(node, ast.BoolOp):
            return _union([self.resolve(item, depth + 1) for item in node.values])
        if isinstance(node, ast.Name):
            if node.id not in self.memo:
                self.memo[node.id] = None  # a name defined through itself is unknown
                self.memo[node.id] = self._name(node.id, depth)
            return self.memo[node.id]
        return None

    def _name(self, name: str, depth: int) -> set[str] | None:
        sources: list[ast.expr | None] = list(self.bound.get(name, []))
        for function, index, default in self.params.get(name, []):
            calls = self.calls.get(function, [])
            if not calls:
                return None  # a parameter of a function never called here: anything
            for call in calls:
                given = [k.value for k in call.keywords if k.arg == name]
                sources.append(call.args[index] if index < len(call.args) else
                               given[0] if given else default)
        if not sources:
            return None
        return _union([self.resolve(source, depth + 1) for source in sources])


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for item in target.elts for name in _names(item)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _union(parts: list[set[str] | None]) -> set[str] | None:
    if any(part is None for part in parts):
        return None
    return {value for part in parts if part is not None for value in part}
