"""Shell text cut as the shell cuts it, for hook lint: simple commands of words, each word
with its quotes removed as the shell removes them (`p'rint'env` is `printenv`, `"TO""KEN"` is
`TOKEN`, `$'\\x61'` is `a`, a backslash-newline joins), comments dropped, and what a command
reads on its standard input kept with it: here-document bodies, here-strings, and whether a
pipe feeds it. One regular expression per token: linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PIECE = (r"(?:[^\s'\"\\;&|()<>`$]|\$(?!['({]))+|\\.|'[^']*'|\"(?:[^\"\\]|\\.)*\""
          r"|\$'(?:[^'\\]|\\.)*'"
          r"|\$\((?:[^()'\"]|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\((?:[^()]|\([^()]*\))*\))*\)"
          r"|\$\{[^}]*\}|`(?:[^`\\]|\\.)*`|\$")
_PIECES = re.compile(_PIECE, re.DOTALL)
_SUBSTITUTION = re.compile(r"\$\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)|`((?:[^`\\]|\\.)*)`",
                           re.DOTALL)
_DOUBLE_ESCAPE = re.compile(r'\\([$`"\\\n])')
_TOKEN = re.compile(
    r"(?P<space>(?:[ \t\r\f\v]|\\\n)+)|(?P<newline>\n)|(?P<comment>#[^\n]*)"
    r"|(?P<op>[<>]\(|&&|\|\||;;|\|&|[;&|()])"  # <( … ) runs a command like $( … )
    r"|(?P<heredoc><<-?(?!<))|(?P<redirect>\d*(?:<<<|>>|>&|<&|<>|>\||[<>]))"
    rf"|(?P<word>(?:{_PIECE})+)|(?P<broken>['\"`\\].*)", re.DOTALL)
_C_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})"
                       r"|0?([0-7]{1,3})|(.))", re.DOTALL)
_C_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
             "e": "\x1b", "E": "\x1b"}


def c_unescape(text: str) -> str:
    """Backslash escapes as printf, echo -e and $'…' expand them (\\x61, \\141, \\u0061 …)."""
    def one(match: re.Match[str]) -> str:
        hex2, hex4, hex8, octal, other = match.groups()
        number = hex2 or hex4 or hex8
        if number is not None or octal is not None:
            code = int(number, 16) if number is not None else int(octal, 8)
            return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else "\ufffd"
        return _C_SIMPLE.get(other, other)
    return _C_ESCAPE.sub(one, text)


def unquote(raw: str) -> str:
    """A word as the shell passes it, expansions left in place: quotes and escapes removed."""
    if "'" not in raw and '"' not in raw and "\\" not in raw:
        return raw
    out = []
    for match in _PIECES.finditer(raw):
        piece = match.group(0)
        if piece.startswith("\\"):
            out.append("" if piece == "\\\n" else piece[1:])
        elif piece.startswith("'"):
            out.append(piece[1:-1])
        elif piece.startswith('"'):
            out.append(_DOUBLE_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1),
                                          piece[1:-1]))
        elif piece.startswith("$'"):
            out.append(c_unescape(piece[2:-1]))
        else:
            out.append(piece)
    return "".join(out)


@dataclass(slots=True)
class Word:
    raw: str  # as written
    text: str  # as the shell passes it (quotes removed, expansions left in place)


@dataclass(slots=True)
class Command:
    """One simple command: its words (redirection targets dropped), what it reads on its
    standard input as written in the text (here-documents, here-strings), whether a pipe
    feeds it, and the files it redirects."""

    words: list[Word] = field(default_factory=list)
    stdin: list[str] = field(default_factory=list)
    piped: bool = False
    files: list[str] = field(default_factory=list)


def commands(text: str) -> list[Command]:
    """The simple commands of `text`, in order."""
    found: list[Command] = []
    current = Command()
    heredocs: list[tuple[Command, str]] = []  # (command, delimiter): bodies after the newline
    pending = ""  # what the next word is: "heredoc" delimiter, here-string "data", "file"
    position, size = 0, len(text)
    while position < size:
        match = _TOKEN.match(text, position)  # prefix match: one token at a time
        if match is None:  # cannot happen (`broken` takes any rest); stop rather than loop
            break
        kind, token, position = match.lastgroup, match.group(0), match.end()
        if kind in ("space", "comment"):
            continue
        if kind in ("newline", "op"):
            if current.words or current.stdin:
                found.append(current)
            current = Command(piped=token in ("|", "|&"))
            pending = ""
            if kind == "newline":
                for command, delimiter in heredocs:
                    body, position = _heredoc_body(text, position, delimiter)
                    command.stdin.append(body)
                heredocs = []
            continue
        if kind in ("heredoc", "redirect"):
            pending = ("heredoc" if kind == "heredoc" else
                       "data" if token.endswith("<<<") else "file")
            continue
        word = Word(token, unquote(token) if kind == "word" else token.lstrip("'\"`\\"))
        if pending:
            if pending == "heredoc":
                heredocs.append((current, word.text))
            elif pending == "data":
                current.stdin.append(word.text)
            else:
                current.files.append(word.text)
            pending = ""
            continue
        if word.raw.isdigit() and position < size and text[position] in "<>":
            continue  # a file descriptor number: 2>/dev/null
        current.words.append(word)
    if current.words or current.stdin:
        found.append(current)
    return found


def _heredoc_body(text: str, start: int, delimiter: str) -> tuple[str, int]:
    """A here-document's body (up to the line holding only its delimiter, tabs before it
    allowed), and the position after it."""
    line_start = start
    while line_start < len(text):
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        if text[line_start:line_end].lstrip("\t").rstrip(" \t") == delimiter:
            return text[start:line_start], line_end
        line_start = line_end + 1
    return text[start:], len(text)


def substitutions(raw: str) -> list[str]:
    """The commands a word runs to make itself: `$( … )` and `` `…` ``."""
    if "$(" not in raw and "`" not in raw:
        return []
    found = []
    for match in _SUBSTITUTION.finditer(raw):
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        found.append(inner if match.group(1) is not None else re.sub(r"\\(.)", r"\1", inner))
    return found
