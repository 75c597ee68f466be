"""Python hook scripts read through their syntax tree (`ast`), not their spelling.

An environment read is recognised by what an expression *is*, whatever it is called:
`os.environ` through any alias (`import os as o`, `from os import environ as e`, `e = o.environ`,
`getattr(os, "environ")`, `vars(os)["environ"]`, `__import__("os")`, `sys.modules["os"]`),
read by subscript, `.get`/`.pop`/`.setdefault`, `getenv`, or `in`. The key is the string the
expression folds to (`"TO" + "KEN"`, `"\\x54OKEN"`, `chr(84) + …`): a key that is not a
constant is a read lint cannot name. Iterating or printing the mapping reads all of it.
Commands handed to `subprocess`, `os.system`, `os.popen` and `os.exec*` are read as shell.
Every string the script holds, folded the same way, goes to the caller (what it may print).

Best effort, as all of lint: a name passed through a function or a container is not followed.
"""

from __future__ import annotations

import ast
import base64
import binascii
from collections.abc import Callable

from horon_bundle.rules.harness_answers import python_answers
from horon_bundle.rules.harness_reads import Reads
from horon_bundle.rules.harness_shell import MAX_NESTING, PROC_ENVIRON, read_argv, read_shell

MAX_FOLDED = 1024  # a string built from constants longer than this is not built
_SHORT = 64  # built strings kept for the caller: answers and keys are short
_OS = {"os", "posix", "nt"}
_MODULES = {**dict.fromkeys(_OS, "os"), "sys": "sys", "subprocess": "subprocess",
            "importlib": "importlib", "builtins": "builtins"}
_ATTRIBUTES = {
    "os": {"environ": "environ", "environb": "environ", "getenv": "getenv",
           "getenvb": "getenv", "system": "shell", "popen": "shell", "__dict__": "namespace",
           **dict.fromkeys(("execl", "execle", "execlp", "execlpe", "execv", "execve",
                            "execvp", "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe",
                            "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn",
                            "posix_spawnp"), "exec")},
    "environ": {"get": "getenv", "pop": "getenv", "setdefault": "getenv",
                "__getitem__": "getenv", "_data": "environ"},
    "sys": {"modules": "modules"},
    "importlib": {"import_module": "importer"},
    "subprocess": {**dict.fromkeys(("run", "call", "check_call", "check_output", "Popen"),
                                   "argv"),
                   "getoutput": "shell", "getstatusoutput": "shell"},
    "builtins": {"getattr": "getattr", "vars": "vars", "__import__": "importer"},
}
_BUILTINS = {"getattr": "getattr", "vars": "vars", "__import__": "importer",
             "__builtins__": "builtins", "globals": "scope", "locals": "scope"}
_DUMPERS = {"print", "str", "repr", "format", "dumps", "dump", "pprint", "pformat", "write",
            "writelines", "join", "list", "sorted", "tuple", "set"}
_STR_METHODS = {"upper", "lower", "strip", "lstrip", "rstrip", "title", "casefold",
                "capitalize", "swapcase", "decode", "encode"}
_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "b64decode": base64.b64decode, "urlsafe_b64decode": base64.urlsafe_b64decode,
    "b32decode": base64.b32decode, "b16decode": base64.b16decode, "a85decode": base64.a85decode,
    "fromhex": lambda data: bytes.fromhex(data.decode("latin-1")), "unhexlify": binascii.unhexlify}


def read_python(text: str, reads: Reads, depth: int = 0) -> bool:
    """Read `text` as Python into `reads`; False when it does not parse (the caller reads it
    by its patterns instead)."""
    try:
        nodes = _nodes(ast.parse(text))
        folded = _fold_all(nodes)
        kinds = _bindings(nodes, folded)
        reader = _Reader(folded, kinds, reads, depth)
        for node in nodes:
            if type(node) in _VISITED:
                reader.visit(node)
        python_answers(nodes, folded, reads)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in nodes:
        value = folded.get(id(node))
        if value is not None and (type(node) is ast.Constant or len(value) <= _SHORT):
            reads.strings.append(value)
            if PROC_ENVIRON.search(value):
                reads.dumps.add("/proc/…/environ")
        elif isinstance(node, ast.keyword) and node.arg is not None:
            reads.strings.append(node.arg)
    return True


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node, each parent before its children (what `ast.walk` gives, without its
    generators: this list is the reader's main cost after parsing)."""
    found: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return found


_FOLDED = {ast.Constant, ast.JoinedStr, ast.BinOp, ast.Subscript, ast.Call}
_VISITED = {ast.Subscript, ast.Compare, ast.FormattedValue, ast.For, ast.Call}


def _fold_all(nodes: list[ast.AST]) -> dict[int, str]:
    """id(node) -> the string an expression of constants comes to. Children come after
    their parents in `nodes`, so walking it backwards folds bottom-up, no recursion however
    deep the expression."""
    folded: dict[int, str] = {}
    for node in reversed(nodes):
        if type(node) not in _FOLDED:
            continue
        try:
            value = _fold_one(node, folded)
        except (ValueError, TypeError, IndexError, OverflowError, binascii.Error,
                UnicodeError):
            value = None
        if value is not None and (type(node) is ast.Constant or len(value) <= MAX_FOLDED):
            folded[id(node)] = value
    return folded


def _fold_one(node: ast.AST, folded: dict[int, str]) -> str | None:
    def of(child: ast.AST | None) -> str | None:
        return folded.get(id(child)) if child is not None else None

    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return None
    if isinstance(node, ast.JoinedStr):
        parts = [of(v.value) if isinstance(v, ast.FormattedValue) else of(v)
                 for v in node.values]
        return "".join(p for p in parts if p is not None) if None not in parts else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = of(node.left), of(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.Subscript):
        base = of(node.value)
        if base is None:
            return None
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            return base[node.slice.value]
        if isinstance(node.slice, ast.Slice):
            return base[slice(_bound(node.slice.lower), _bound(node.slice.upper),
                              _bound(node.slice.step))]
        return None
    if isinstance(node, ast.Call):
        return _fold_call(node, of)
    return None


def _bound(node: ast.AST | None) -> int | None:
    """A slice bound: an integer constant, or None when omitted (ValueError otherwise)."""
    if node is None:
        return None
    return _integer(node)


def _integer(node: ast.AST) -> int:
    """An integer constant, negative ones included (ValueError for anything else)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    raise ValueError("not an integer constant")


def _fold_call(node: ast.Call, of: Callable[[ast.AST | None], str | None]) -> str | None:
    func, args = node.func, node.args
    values = [of(a) for a in args]
    if isinstance(func, ast.Name) and func.id == "chr" and len(args) == 1:
        return chr(_integer(args[0]))
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr in _DECODERS and len(values) == 1 and values[0] is not None:
        return bytes(_DECODERS[func.attr](values[0].encode("latin-1"))).decode("latin-1")
    base = of(func.value)
    if base is None:
        return None
    if func.attr == "join" and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        items = [of(item) for item in args[0].elts]
        strings = [item for item in items if item is not None]
        return base.join(strings) if len(strings) == len(items) else None
    if func.attr in _STR_METHODS and not args:
        return base if func.attr in ("decode", "encode") else str(getattr(base, func.attr)())
    old, new = [*values, None, None][:2]
    if func.attr == "replace" and len(values) == 2 and old is not None and new is not None:
        return base.replace(old, new)
    return None


_BINDING = {ast.Import, ast.ImportFrom}


def _bindings(nodes: list[ast.AST], folded: dict[int, str]) -> dict[str, str]:
    """name -> what it is bound to (os, environ, getenv, …), from imports and assignments,
    taken in the file's order (`nodes` holds a body's statements last first: in that order a
    chain `a = os.environ; b = a; c = b; d = c` took a round per link and escaped three);
    a few rounds more for names bound before the line that gives them their value."""
    kinds: dict[str, str] = {}
    for node in nodes:
        if type(node) not in _BINDING:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                module = _MODULES.get(alias.name if alias.asname else top)
                if module is not None:
                    kinds[alias.asname or top] = module
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            module = _MODULES.get(node.module)
            for alias in node.names if module is not None else ():
                names = _ATTRIBUTES.get(module or "", {})
                for name in (names if alias.name == "*" else [alias.name]):
                    kind = names.get(name) or _MODULES.get(f"{node.module}.{name}")
                    if kind is not None:
                        kinds[alias.asname or name] = kind
    assignments = sorted((n for n in nodes
                          if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr))),
                         key=lambda n: (n.lineno, n.col_offset))
    for _round in range(3):
        changed = False
        memo: dict[int, str | None] = {}
        for node in assignments:
            value = node.value
            if value is None:
                continue
            kind = _classify(value, kinds, folded, memo)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and kind is not None \
                        and kinds.get(target.id) != kind:
                    kinds[target.id] = kind
                    changed = True
        if not changed:
            break
    return kinds


def _classify(node: ast.AST, kinds: dict[str, str], folded: dict[int, str],
              memo: dict[int, str | None]) -> str | None:
    """What an expression evaluates to, as far as env reads go (None: nothing of interest),
    each node classified once (`memo`); recursion follows attribute chains and calls."""
    key = id(node)
    if key not in memo:
        memo[key] = _classify_one(node, kinds, folded, memo)
    return memo[key]


def _classify_one(node: ast.AST, kinds: dict[str, str], folded: dict[int, str],
                  memo: dict[int, str | None]) -> str | None:
    def of(child: ast.AST) -> str | None:
        return _classify(child, kinds, folded, memo)

    if isinstance(node, ast.Name):
        return kinds.get(node.id) or _BUILTINS.get(node.id)
    if isinstance(node, ast.Attribute):
        return _ATTRIBUTES.get(of(node.value) or "", {}).get(node.attr)
    if isinstance(node, ast.Subscript):
        base, name = of(node.value), folded.get(id(node.slice))
        if base == "names" and name is not None:  # globals()["os"]
            return kinds.get(name) or _BUILTINS.get(name)
        if base == "namespace" and name is not None:
            return _ATTRIBUTES["os"].get(name)
        if base == "modules" and name is not None:
            return _MODULES.get(name)
        return None
    if isinstance(node, ast.Dict):  # {**os.environ, …}: a copy of the environment
        copied = any(k is None and of(v) == "environ"
                     for k, v in zip(node.keys, node.values, strict=True))
        return "environ" if copied else None
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
        return "environ" if of(node.func.value) == "environ" else None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
            and of(node.func.value) == "modules":  # sys.modules.get("os")
        return _MODULES.get(folded.get(id(node.args[0])) or "")
    if not node.args:
        return "names" if of(node.func) == "scope" else None
    func, first = of(node.func), node.args[0]
    if func == "importer":
        return _MODULES.get(folded.get(id(first)) or "")
    if func == "vars":
        return "namespace" if of(first) == "os" else None
    if func == "getattr" and len(node.args) >= 2:
        name = folded.get(id(node.args[1]))
        return _ATTRIBUTES.get(of(first) or "", {}).get(name or "")
    if isinstance(node.func, ast.Name) and node.func.id == "dict":
        return "environ" if of(first) == "environ" else None
    return None


class _Reader:
    def __init__(self, folded: dict[int, str], kinds: dict[str, str], reads: Reads,
                 depth: int) -> None:
        self.folded, self.kinds, self.reads, self.depth = folded, kinds, reads, depth
        self.memo: dict[int, str | None] = {}

    def kind(self, node: ast.AST) -> str | None:
        return _classify(node, self.kinds, self.folded, self.memo)

    def name(self, key: ast.AST | None, how: str) -> None:
        value = self.folded.get(id(key)) if key is not None else None
        if value is None:
            self.reads.computed.add(how)
        else:
            self.reads.names.add(value)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and self.kind(node.value) == "environ":
            self.name(node.slice, "os.environ[…]")
        elif isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and any(self.kind(c) == "environ" for c in node.comparators):
            self.name(node.left, "… in os.environ")
        elif isinstance(node, ast.FormattedValue) and self.kind(node.value) == "environ":
            self.reads.dumps.add("os.environ formatted into a string")
        elif isinstance(node, ast.For) and self.kind(node.iter) == "environ":
            self.reads.dumps.add("iterating os.environ")
        elif isinstance(node, ast.Call):
            self.call(node)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2 \
                and self.kind(node.args[0]) in ("os", "environ") \
                and id(node.args[1]) not in self.folded:
            self.reads.computed.add("getattr(os, …)")
        if isinstance(func, ast.Name) and func.id in ("exec", "eval", "compile") and node.args:
            code = self.folded.get(id(node.args[0]))
            if code is None:
                self.reads.unread.add(f"{func.id}() of code made at run time")
            elif self.depth < MAX_NESTING:
                self.reads.code.append(("python", code))
        kind = self.kind(func)
        if kind == "getenv":
            named = [k.value for k in node.keywords if k.arg in ("key", "k")]
            self.name(node.args[0] if node.args else named[0] if named else None, "getenv")
            return
        if isinstance(func, ast.Attribute) and func.attr in ("items", "values") \
                and self.kind(func.value) == "environ":
            self.reads.dumps.add(f"os.environ.{func.attr}()")
            return
        terminal = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else ""
        if terminal in _DUMPERS and any(self.kind(a) == "environ" for a in node.args):
            self.reads.dumps.add(f"{terminal}(os.environ)")
        if self.depth >= MAX_NESTING or not node.args:
            return
        if kind in ("shell", "argv", "exec"):
            self.command(kind, node.args)

    def command(self, kind: str, args: list[ast.expr]) -> None:
        first = args[0] if kind != "exec" or len(args) < 2 else args[1]
        if kind == "exec" and isinstance(first, (ast.List, ast.Tuple)):
            argv = first.elts
        elif kind == "exec":
            argv = args[1:]
        elif isinstance(first, (ast.List, ast.Tuple)):
            argv = first.elts
        elif isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) \
                and first.func.attr == "split" and first.args[:1] != []:  # shlex.split("…")
            text = self.folded.get(id(first.args[0]))
            if text is not None:
                read_shell(text, self.reads, self.depth + 1)
            return
        elif isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) \
                and first.func.attr == "split":  # "printenv X".split()
            text = self.folded.get(id(first.func.value))
            if text is not None:
                read_argv(text.split(), self.reads, self.depth + 1)
            return
        else:
            text = self.folded.get(id(first))
            if text is not None:
                read_shell(text, self.reads, self.depth + 1)
            return
        words = [self.folded.get(id(item), "$?") for item in argv]
        read_argv(words, self.reads, self.depth + 1)
