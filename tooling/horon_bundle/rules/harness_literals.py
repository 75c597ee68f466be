"""Decoded strings for hook lint: what a hook may answer, and the languages lint reads by their
patterns.

A hook's *output* is what its host reads, as JSON: `"\\u0061sk"` is `ask` to Claude Code. So a
`permissionDecision` is judged over the strings a script holds after every decoding it can go
through on its way out — the language's own escapes (Python's already decoded by `ast`, the
shell's quotes and `printf`/`$'…'` escapes, JavaScript's `\\x`/`\\u`), then JSON's, twice over
for JSON inside JSON. A hook that names the key answers `ask` if `ask` is among those strings;
one that names it with no answer at all (`allow`, `deny` or `ask`) computes its answer when it
runs, and lint says it cannot judge it.

JavaScript, TypeScript, Ruby, Perl, PHP and Go are read by patterns over the text with its
escapes decoded and adjacent string literals joined (`"TO" + "KEN"`): the environment object
by its names and aliases (`const e = process.env`, `const {TOKEN} = process.env`), a
computed key (`process.env[name]`) as a read lint cannot name, and the whole object printed or
enumerated as a read of everything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from horon_bundle.rules.harness_reads import Reads
from horon_bundle.rules.harness_shell import EXPANSION, read_shell
from horon_bundle.rules.harness_shell_lex import c_unescape

MAX_ALIASES = 16  # names of the environment object followed through a script
KEY = "permissionDecision"
ANSWERS = frozenset({"allow", "deny", "ask"})
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)
# the key and the value after it: a word, or what a shell or a format fills in at run time
_PAIR = re.compile(r"permissionDecision[\"'\\]*\s*[:=,]\s*[\"'\\]*([A-Za-z]+|[$`][^\"'\s,}]*)")
_JS_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4}))")
_JOINED = re.compile(r"(\"|')((?:(?!\1)[^\\\n]|\\.)*)\1\s*\+\s*(\"|')((?:(?!\3)[^\\\n]|\\.)*)\3")
_LITERAL = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\]|\\.)*)`",
                      re.DOTALL)
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
_QUOTED_NAME = r"\s*['\"`]" + _NAME + r"['\"`]\s*"
_ENV_OBJECTS = (r"process\.env", r"process\[\s*['\"`]env['\"`]\s*\]", r"Bun\.env",
                r"import\.meta\.env", r"Deno\.env\.toObject\(\s*\)")
ENV_READS = (  # (pattern, is shell syntax): each captures the variable's name
    (EXPANSION, True),  # shell, also inside hook command lines and headers
    (re.compile(r"os\.environ(?:\.get)?\s*[\[(]\s*['\"]" + _NAME), False),  # Python
    (re.compile(r"os\.getenv\(\s*['\"]" + _NAME), False),
    (re.compile(r"(?:" + "|".join(_ENV_OBJECTS) + r")\s*(?:\?\.|\.)\s*" + _NAME), False),
    (re.compile(r"(?:" + "|".join(_ENV_OBJECTS) + r")\s*(?:\?\.)?\[" + _QUOTED_NAME + r"\]"),
     False),
    (re.compile(r"Deno\.env\.get\(" + _QUOTED_NAME), False),
    (re.compile(r"Reflect\.get\(\s*(?:" + "|".join(_ENV_OBJECTS) + r")\s*," + _QUOTED_NAME),
     False),
    (re.compile(r"ENV(?:\.fetch\(|\[)" + _QUOTED_NAME), False),  # Ruby
    (re.compile(r"\$ENV\{\s*['\"]?" + _NAME), False),  # Perl
    (re.compile(r"\$_(?:ENV|SERVER)\[" + _QUOTED_NAME), False),  # PHP
    (re.compile(r"(?:os\.Getenv|os\.LookupEnv|getenv|System\.getenv)\(" + _QUOTED_NAME),
     False),  # Go, PHP, C, Java
    (re.compile(r"ENVIRON\[" + _QUOTED_NAME), False),  # awk
    (re.compile(r"\$ENV\.\s*" + _NAME + r"|\benv\.([A-Z_][A-Z0-9_]*)\b"), False),  # jq
)
_DUMPS = re.compile(
    r"(?:JSON\.stringify|Object\.(?:entries|values|assign)|console\.\w+|util\.inspect)\(\s*"
    r"(?:" + "|".join(_ENV_OBJECTS) + r")\s*[,)]|Deno\.env\.toObject\(|os\.Environ\(\)"
    r"|ENV\.(?:to_h|to_a|each|map|inspect)\b|%ENV\b|getenv\(\s*\)"
    r"|for\s*\(\s*\w+\s+in\s+ENVIRON\s*\)|/proc/[^/\s'\"`]+/environ")
_COMPUTED = re.compile(r"(?:" + "|".join(_ENV_OBJECTS) + r")\s*(?:\?\.)?\[\s*(?!['\"`])"
                       r"|(?:os\.Getenv|getenv)\(\s*[A-Za-z_]")
_ALIAS = re.compile(r"(?:const|let|var)\s+" + _NAME + r"\s*=\s*(?:" + "|".join(_ENV_OBJECTS)
                    + r")\s*[;\n]")
_DESTRUCTURED = re.compile(r"(?:const|let|var)\s*\{([^}]*)\}\s*=\s*(?:" + "|".join(_ENV_OBJECTS)
                           + r")")
_ENV_OF_PROCESS = re.compile(r"(?:const|let|var)\s*\{[^}]*\benv\s*(?::\s*" + _NAME
                             + r")?[^}]*\}\s*=\s*process\b")
_EXEC = re.compile(r"\b(?:execSync|exec|spawnSync|spawn|execFileSync|execFile|system|"
                   r"popen|`)\s*\(?\s*(?:\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)')")


def json_decoded(text: str) -> str:
    """`text` with each JSON string in it replaced by its decoded value (quotes dropped, so
    that JSON written inside a JSON string is a document again for the next round), while
    escapes are left, at most three rounds."""
    for _round in range(3):
        if "\\" not in text:
            break
        decoded = _JSON_STRING.sub(lambda m: _json_string(m.group(1)), text)
        if decoded == text:
            break
        text = decoded
    return text


def _json_string(inner: str) -> str:
    try:
        value = json.loads('"' + inner + '"')
    except ValueError:
        return inner
    return value if isinstance(value, str) else inner


def js_decoded(text: str) -> str:
    """`\\xHH`, `\\uHHHH` and `\\u{H…}` escapes decoded, adjacent literals joined."""
    def one(match: re.Match[str]) -> str:
        digits = match.group(1) or match.group(2) or match.group(3)
        code = int(digits, 16)
        return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else "\ufffd"
    text = _JS_ESCAPE.sub(one, text)
    for _round in range(8):
        joined = _JOINED.sub(lambda m: m.group(1) + m.group(2) + m.group(4) + m.group(1), text)
        if joined == text:
            break
        text = joined
    return text


def permission_answers(strings: Iterable[str],
                       assigned: Mapping[str, set[str | None]] | None = None,
                       ) -> tuple[bool, set[str], bool]:
    """(whether the strings name permissionDecision, the answers among them, whether a value
    of the key is filled in at run time), each string taken as written and decoded. A value
    `$d` or `${d}` is every value the shell text assigns to `d` (`assigned`), if it spells
    them all; otherwise it, like `` `…` ``, is made at run time."""
    mentions, answers, computed = False, set(), False
    assigned = assigned or {}
    for text in strings:
        variants = {text}
        if "\\" in text:
            variants |= {json_decoded(text), json_decoded(c_unescape(text)),
                         json_decoded(js_decoded(text))}
        for variant in variants:
            if variant in ANSWERS:
                answers.add(variant)
            if KEY in variant:
                mentions = True
                for match in _PAIR.finditer(variant):
                    value = match.group(1)
                    if value[0] in "$`":
                        values = assigned.get(value.strip("${}`"), {None})
                        answers.update(v for v in values if v is not None)
                        computed = computed or None in values
                    elif value in ANSWERS:
                        answers.add(value)
    return mentions, answers, computed


def read_patterns(text: str, reads: Reads, *, expansions: bool, depth: int = 0) -> None:
    """Environment reads of `text` by their patterns, over the text as written and decoded
    (`expansions`: shell text, whose `$NAME` and `${NAME}` read NAME; its other patterns are
    read by `rules.harness_shell`); otherwise also its string literals to `reads.strings`,
    and the commands it hands a shell read as shell."""
    shell = expansions
    decoded = js_decoded(text)
    for variant in {text, decoded}:
        for pattern, is_shell in ENV_READS:
            if shell or not is_shell:
                reads.names.update(g for m in pattern.finditer(variant) for g in m.groups() if g)
        if shell:
            continue
        for match in _DUMPS.finditer(variant):
            reads.dumps.add(match.group(0).rstrip("(, \t"))
        if _COMPUTED.search(variant):
            reads.computed.add("an environment key that is no literal")
        _aliases(variant, reads)
    if shell:
        return
    if KEY in decoded:  # an unquoted key ({permissionDecision: …}) is no string literal
        reads.strings.append(decoded)
    for match in _LITERAL.finditer(decoded):
        reads.strings.append(next(g for g in match.groups() if g is not None))
    for match in _EXEC.finditer(decoded):
        command = match.group(1) if match.group(1) is not None else match.group(2)
        read_shell(c_unescape(command), reads, depth + 1)


def _aliases(text: str, reads: Reads) -> None:
    names = {m.group(1) for m in _ALIAS.finditer(text)}
    names |= {m.group(1) or "env" for m in _ENV_OF_PROCESS.finditer(text)}
    if len(names) > MAX_ALIASES:  # each alias is one more pass over the text
        reads.unread.add(f"more than {MAX_ALIASES} aliases of the environment object")
        names = set(sorted(names)[:MAX_ALIASES])
    for name in names:
        through = re.compile(rf"\b{re.escape(name)}\s*(?:\?\.|\.)\s*{_NAME}"
                             rf"|\b{re.escape(name)}\s*\[{_QUOTED_NAME}\]")
        for match in through.finditer(text):
            reads.names.add(match.group(1) or match.group(2))
    for match in _DESTRUCTURED.finditer(text):
        for part in match.group(1).split(","):
            name = part.split(":")[0].split("=")[0].strip().lstrip(".")
            if re.fullmatch(_NAME, name):
                reads.names.add(name)
            elif name:
                reads.computed.add("a destructured key that is no name")
