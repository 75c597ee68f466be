"""Which bundle files a hook or MCP server runs through `${CLAUDE_PLUGIN_ROOT}`.

The host substitutes the plugin root for `${CLAUDE_PLUGIN_ROOT}` (also `$CLAUDE_PLUGIN_ROOT`)
before running a command: in the shell form the whole command line is one shell string
(`python3 "${CLAUDE_PLUGIN_ROOT}/hooks/x.py"`, several references, quotes, operators), in the
exec form (`args`) the command is the program and each argument is substituted on its own.
Muse Code reads the same files the same way (docs/harness.md). Every reference is resolved
against the bundle's files: missing or outside the root is a refusal.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from horon_bundle.model.harness.file_index import FileIndex

ROOT_REFERENCE = re.compile(
    r"\$(?:\{CLAUDE_PLUGIN_ROOT(?::?[-=?+][^}]*)?\}|CLAUDE_PLUGIN_ROOT(?![A-Za-z0-9_]))")
_DYNAMIC = re.compile(r"[$*?\[`]")
_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
MISSING, OUTSIDE, DYNAMIC, FOUND = "missing", "outside", "dynamic", "found"


@dataclass(frozen=True, slots=True, kw_only=True)
class RootReference:
    field: str  # command, args[2] …
    word: str  # the word holding the reference, as the host passes it
    path: str | None  # the bundle path it names ('' = the root); None when not static
    runs_directly: bool  # the word is the program itself, so it must be executable

    def resolve(self, files: FileIndex | Mapping[str, Any]) -> str:
        """FOUND, MISSING, OUTSIDE or DYNAMIC; `files` indexed (a mapping is indexed here: lint
        passes the index it built once, so each reference is a lookup, not a scan)."""
        if self.path is None:
            return DYNAMIC
        if self.path == ".." or self.path.startswith("../"):
            return OUTSIDE
        index = files if isinstance(files, FileIndex) else FileIndex(files)
        if self.path == "" or index.exists(self.path):
            return FOUND
        return MISSING


def _reference(field: str, word: str, *, runs_directly: bool) -> RootReference | None:
    match = ROOT_REFERENCE.search(word)
    if match is None:
        return None
    rest = word[match.end():]
    path: str | None
    if _DYNAMIC.search(rest) or (rest and not rest.startswith("/")):
        path = None
    else:
        stripped = rest.strip("/")
        path = posixpath.normpath(stripped) if stripped else ""
        path = "" if path == "." else path
    return RootReference(field=field, word=word, path=path, runs_directly=runs_directly)


def shell_words(command: str) -> list[str]:
    """The words of a shell command line (quotes removed, operators as their own words)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the host's shell refuses it too; scan plainly
        return command.replace('"', " ").replace("'", " ").split()


def shell_references(command: str, field: str = "command") -> list[RootReference]:
    found = []
    program_next = True
    for word in shell_words(command):
        if word in _OPERATORS:
            program_next = True
            continue
        is_program = program_next and not _ASSIGNMENT.fullmatch(word)
        if is_program:
            program_next = False
        reference = _reference(field, word, runs_directly=is_program)
        if reference is not None:
            found.append(reference)
    return found


def exec_references(command: str, args: tuple[str, ...]) -> list[RootReference]:
    found = []
    program = _reference("command", command, runs_directly=True)
    if program is not None:
        found.append(program)
    for index, arg in enumerate(args):
        reference = _reference(f"args[{index}]", arg, runs_directly=False)
        if reference is not None:
            found.append(reference)
    return found


_PY_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[A-Za-z_][\w.]*)[ \t]+import|import[ \t]+"
                        r"([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*))", re.MULTILINE)
_JS_IMPORT = re.compile(r"(?:require\(|from[ \t]+|import[ \t]*\(?)[ \t]*['\"](\.{1,2}/[^'\"]+)"
                        r"['\"]")
_SH_SOURCE = re.compile(r"(?:^|[;&|\s])(?:source|\.)[ \t]+[\"']?([^\s\"';&|]+)", re.MULTILINE)
_JS_EXTENSIONS = ("", ".js", ".mjs", ".cjs", ".ts", ".mts", "/index.js", "/index.ts")
MAX_FOLLOWED = 256


def _existing(candidates: list[str], files: Mapping[str, Any]) -> list[str]:
    found = []
    for candidate in candidates:
        normal = posixpath.normpath(candidate)
        if not normal.startswith("../") and normal in files:
            found.append(normal)
    return found


def local_imports(path: str, text: str, files: Mapping[str, Any]) -> list[str]:
    """Bundle files a script pulls in: sibling Python modules, relative JS/TS imports, shell
    `source` of bundle files (so a credential read two files away is still seen)."""
    base = posixpath.dirname(path)
    candidates: list[str] = []
    if path.endswith(".py"):
        for match in _PY_IMPORT.finditer(text):
            names = match.group(1) or match.group(2) or ""
            for name in names.split(","):
                module = name.strip().lstrip(".").replace(".", "/")
                if module:
                    candidates += [posixpath.join(base, module + ".py"),
                                   posixpath.join(base, module, "__init__.py")]
    for match in _JS_IMPORT.finditer(text):
        candidates += [posixpath.join(base, match.group(1)) + ext for ext in _JS_EXTENSIONS]
    for match in _SH_SOURCE.finditer(text):
        word = match.group(1)
        reference = _reference("source", word, runs_directly=False)
        if reference is not None and reference.path:
            candidates.append(reference.path)
        elif not word.startswith(("$", "/", "~")):
            candidates.append(posixpath.join(base, word))
    return _existing(candidates, files)
