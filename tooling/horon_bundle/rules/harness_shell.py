"""Shell commands normalised and judged for hook lint.

Each simple command (cut by `rules.harness_shell_lex`) has its program reduced to its name —
paths stripped (`/usr/bin/printenv`), and wrappers that run the next word (`env`, `command`,
`exec`, `nohup`, `sudo`, `timeout` …) looked through — and is then judged: `printenv NAME` and
`declare -p NAME` read NAME; `printenv`, a bare `env`, `export`, `declare -p` or `set`, and
`/proc/*/environ` read the whole environment; `sh -c`, `bash -c`, `eval` and `$( … )` are read
again as shell; `python -c`, `node -e` — and code fed to an interpreter's standard input by a
here-document, a here-string or a pipe from `echo`/`printf`/`cat` — go to that language's
reader. Expansions (`$NAME`, `${NAME}`) are found in the raw text, quoted or not; `${!x}` is a
name made at run time, code piped from anything else or `eval` of a substitution is code lint
cannot read.

It reads what the text says; it is not a shell: a program chosen at run time (`$cmd`) is not
followed (but its `-c CODE` is read).
"""

from __future__ import annotations

import posixpath
import re

from horon_bundle.rules.harness_reads import Reads
from horon_bundle.rules.harness_shell_lex import Command, commands, substitutions

MAX_NESTING = 4  # sh -c "sh -c '…'", eval, $( … ) read again at most this deep
NESTED = f"code nested more than {MAX_NESTING} deep"  # what lint then says it did not read
MAX_ALIAS_WORDS = 8  # the words an alias stands for (a long one is cut: each use copies it)

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=", re.DOTALL)
PROC_ENVIRON = re.compile(r"/proc/[^/\s]+/environ")
EXPANSION = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")  # $NAME, ${NAME}, ${NAME:-…}
# programs that run the word after their options: looked through to the program they run
_WRAPPERS = {"command", "builtin", "exec", "nohup", "time", "nice", "setsid", "stdbuf",
             "timeout", "sudo", "doas", "xargs", "unbuffer", "chronic", "ionice", "taskset",
             "busybox", "caffeinate", "catchsegv", "flock", "watch", "strace", "ltrace"}
_WRAPPER_VALUES = {"timeout": 1, "flock": 1, "taskset": 1}  # operands before the program
_WRAPPER_VALUED = {  # options that take the next word as their value
    "nice": {"-n", "--adjustment"}, "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "ionice": {"-c", "-n", "-p", "-t"}, "sudo": {"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t"},
    "doas": {"-u", "-C"}, "xargs": {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"},
    "flock": {"-w", "-E"}, "watch": {"-n", "-d"}, "strace": {"-o", "-e", "-p", "-s", "-u"},
    "ltrace": {"-o", "-e", "-p", "-s", "-u"}}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh"}
_PYTHON = re.compile(r"python[0-9.]*|pypy[0-9.]*|uv|uvx")
_SCRIPTING = {"node": "js", "nodejs": "js", "deno": "js", "bun": "js", "tsx": "js",
              "ts-node": "js", "perl": "other", "ruby": "other", "php": "other"}
_CODE_FLAGS = {"-c", "-e", "--eval", "-p", "--print", "-E", "-r", "eval"}
_DUMP_BUILTINS = {"export": {"-p", "-x", "-px", "-xp"}, "declare": {"-p", "-x", "-px", "-xp"},
                  "typeset": {"-p", "-x", "-px", "-xp"}, "set": set(), "env": set()}
_KEYWORDS = {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
             "time", "for", "case", "esac", "select", "in", "function", "coproc"}
_HEADERS = {"for", "case", "select", "in", "esac"}
_SETTERS = {"export", "local", "readonly", "declare", "typeset"}
_FILTERS = {"awk", "gawk", "mawk", "nawk", "busybox-awk", "jq", "gojq", "yq"}
_FILTER_VALUED = {"-v", "-F", "-f", "--arg", "--argjson", "--slurpfile", "--rawfile",
                  "--indent", "-L"}
_LANGUAGES = {**dict.fromkeys(SHELLS, "shell"), **_SCRIPTING}
_PRINTERS = {"echo", "printf", "cat"}  # what they print is their arguments or their input


def read_shell(text: str, reads: Reads | None = None, depth: int = 0,
               aliases: dict[str, list[str]] | None = None) -> Reads:
    """What `text` (a command line or a script) reads, by its normalised commands."""
    reads = reads if reads is not None else Reads()
    aliases = aliases if aliases is not None else {}
    if PROC_ENVIRON.search(text):
        reads.dumps.add("/proc/…/environ")
    reads.names.update(match.group(1) for match in EXPANSION.finditer(text))
    if "${!" in text:
        reads.computed.add("${!…}")
    previous: Command | None = None
    for command in commands(text):
        words = _without_keywords([word.text for word in command.words])
        reads.strings.extend(words)
        reads.strings.extend(command.stdin)
        if len(words) > 2:  # what echo prints: its arguments, joined; printf's below
            reads.strings.append(" ".join(words[1:]))
        if words and program_name(words[0]) == "printf":
            reads.strings.append(printf_output(words[1:]))
        if any(PROC_ENVIRON.search(word) for word in (*words, *command.files)):
            reads.dumps.add("/proc/…/environ")
        if depth < MAX_NESTING:
            for word in command.words:
                for inner in substitutions(word.raw):
                    read_shell(inner, reads, depth + 1)
        fed = list(command.stdin)
        if command.piped:
            fed += _printed(previous)
        read_argv(_expand_alias(words, aliases), reads, depth, stdin=fed)
        _assignments(command, words, reads)
        if words and words[0] == "alias":
            for defined in words[1:]:
                name, _is, value = defined.partition("=")
                if _is:  # lexed once; its first words stand for the alias wherever it is used
                    aliases[name] = [word.text for command in commands(value)[:1]
                                     for word in command.words[:MAX_ALIAS_WORDS]]
        previous = command
    return reads


def _assignments(command: Command, words: list[str], reads: Reads) -> None:
    """Shell variables the command sets, with their values when the text spells them."""
    raw = {word.text: word.raw for word in command.words}
    head = [w.text for w in command.words]
    setters = head[1:] if head and head[0] in _SETTERS else head
    for word in setters:
        if not _ASSIGNMENT.match(word):  # prefix match: `NAME=` begins the word
            break
        name, value = word.split("=", 1)
        made = "$" in raw.get(word, word) or "`" in raw.get(word, word)
        reads.assigned.setdefault(name.rstrip("+"), set()).add(None if made else value)
    if head and head[0] in ("read", "for", "select"):  # set from input or a list
        names = [w for w in head[1:] if not w.startswith("-")] if head[0] == "read" \
            else head[1:2]
        for name in names:
            reads.assigned.setdefault(name, set()).add(None)


def _without_keywords(words: list[str]) -> list[str]:
    """The command itself: reserved words before it (`if`, `then`, `!`, `{` …) dropped; the
    head of `for`/`case`/`select` (its words are no command) dropped whole."""
    index = 0
    while index < len(words) and words[index] in _KEYWORDS:
        if words[index] in _HEADERS:
            return []
        index += 2 if words[index] == "function" else 1  # function NAME { …
    return words[index:]


def _expand_alias(words: list[str], aliases: dict[str, list[str]]) -> list[str]:
    if not words or words[0] not in aliases:
        return words
    return [*aliases[words[0]], *words[1:]]


def _printed(command: Command | None) -> list[str]:
    """What the command before a pipe prints, when the text says it (echo, printf, cat of
    a here-document); `_UNKNOWN` otherwise (said if it is run as code)."""
    if command is None or not command.words:
        return []
    words = [word.text for word in command.words]
    program = program_name(words[0])
    if program in _PRINTERS and not any(
            "$" in word.raw or "`" in word.raw for word in command.words[1:]):
        if program == "printf":
            return [printf_output(words[1:])]
        return [" ".join(w for w in words[1:] if not w.startswith("-")), *command.stdin]
    return [_UNKNOWN]


_UNKNOWN = "\x00unknown"  # the output of a command lint does not read


_CONVERSION = re.compile(r"%(?:%|[-+ #0]*\d*(?:\.\d+)?[a-zA-Z])")


def printf_output(args: list[str]) -> str:
    """What `printf FORMAT ARG…` prints, its escapes left for the decoders: each conversion
    takes the next argument as written (`$d` stays `$d`: a value made at run time)."""
    if not args:
        return ""
    given = iter(args[1:])
    return _CONVERSION.sub(lambda m: "%" if m.group(0) == "%%" else next(given, ""), args[0])


def program_name(word: str) -> str:
    return posixpath.basename(word.rstrip("/")) if "/" in word else word


def read_argv(argv: list[str], reads: Reads, depth: int = 0, *,
              stdin: list[str] | None = None) -> None:
    """Judge one simple command (an argument vector, quotes already removed); `stdin` is what
    the text says it reads on its standard input."""
    index = 0
    while index < len(argv) and _ASSIGNMENT.match(argv[index]):  # prefix match: `NAME=`
        index += 1
    while index < len(argv):
        program = program_name(argv[index])
        rest = argv[index + 1:]
        if program == "env":
            taken = _env_options(rest, reads, depth)
            if taken < 0:  # -S: its string was read as the command
                return
            index += 1 + taken
            if index >= len(argv):
                reads.dumps.add("env")
                return
            continue
        if program in _WRAPPERS:
            index += 1 + _wrapper_options(program, rest)
            continue
        _judge(program, rest, reads, depth)
        if stdin and depth < MAX_NESTING:
            _fed(program, rest, stdin, reads, depth)
        return


def _fed(program: str, args: list[str], stdin: list[str], reads: Reads, depth: int) -> None:
    """Code an interpreter reads on its standard input (it names no script and no -c)."""
    language = "python" if _PYTHON.fullmatch(program) else _LANGUAGES.get(program)
    flags = _CODE_FLAGS if language in ("js", "other") else {"-c"}
    if language is None or any(not a.startswith("-") for a in args) \
            or _after_flag(args, flags) is not None:
        return
    for code in stdin:
        if code == _UNKNOWN:
            reads.unread.add(f"code piped into {program} from a command lint does not read")
        elif language == "shell":
            read_shell(code, reads, depth + 1)
        else:
            reads.code.append((language, code))


def _env_options(rest: list[str], reads: Reads, depth: int) -> int:
    """How many words `env` takes before its program (options, NAME=value); -1 when -S gave
    the command as one string, which is read as shell."""
    taken = 0
    while taken < len(rest):
        word = rest[taken]
        if word in ("-u", "--unset", "-C", "--chdir"):
            taken += 2
        elif word in ("-S", "--split-string") and taken + 1 < len(rest):
            if depth < MAX_NESTING:
                read_shell(" ".join(rest[taken + 1:]), reads, depth + 1)
            return -1
        elif word.startswith("-") or _ASSIGNMENT.match(word):  # prefix match: `NAME=`
            taken += 1
        else:
            break
    return taken


def _wrapper_options(program: str, rest: list[str]) -> int:
    """How many words a wrapper takes before the program it runs."""
    taken = 0
    valued = _WRAPPER_VALUED.get(program, set())
    positional = _WRAPPER_VALUES.get(program, 0)
    while taken < len(rest):
        word = rest[taken]
        if word in valued:
            taken += 2
        elif word.startswith("-"):
            taken += 1
        elif positional > 0:
            positional -= 1
            taken += 1
        else:
            break
    return taken


def _judge(program: str, args: list[str], reads: Reads, depth: int) -> None:
    operands = [a for a in args if not a.startswith("-")]
    if program == "printenv":
        if not operands:
            reads.dumps.add("printenv")
        for name in operands:
            if "$" in name or "`" in name:
                reads.computed.add(f"printenv {name}")
            else:
                reads.names.add(name)
    elif program in _DUMP_BUILTINS and all(a in _DUMP_BUILTINS[program] for a in args):
        reads.dumps.add(program if not args else f"{program} {' '.join(args)}")
    elif program in ("declare", "typeset") and "-p" in args:
        reads.names.update(operands)  # declare -p NAME prints NAME's value
    elif depth >= MAX_NESTING:
        if program == "eval" or (program in _SCRIPTING and _after_flag(args, _CODE_FLAGS)) \
                or ((program in SHELLS or program.startswith("$") or _PYTHON.fullmatch(program))
                    and _after_flag(args, {"-c"}) is not None):
            reads.unread.add(NESTED)  # said, not silently skipped: a way to hide a read
        return
    elif program == "eval":
        if any("$" in a or "`" in a for a in args):
            reads.unread.add("eval of text made at run time")
        read_shell(" ".join(args), reads, depth + 1)
    elif program in SHELLS or program.startswith("$"):  # `$SHELL -c …`: read as shell
        code = _after_flag(args, {"-c"})
        if code is not None:
            read_shell(code, reads, depth + 1)
    elif _PYTHON.fullmatch(program):
        code = _after_flag(args, {"-c"})
        if code is not None:
            reads.code.append(("python", code))
    elif program in _SCRIPTING:
        code = _after_flag(args, _CODE_FLAGS)
        if code is not None:
            reads.code.append((_SCRIPTING[program], code))
    elif program == "find":  # find … -exec COMMAND … ; runs COMMAND
        for index, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((i for i in range(index + 1, len(args)) if args[i] in (";", "+")),
                           len(args))
                read_argv(args[index + 1:end], reads, depth + 1)
    elif program in _FILTERS:  # awk 'BEGIN{…}', jq '…': the program is the first operand
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in _FILTER_VALUED else 1
        if index < len(args):
            reads.code.append(("other", args[index]))


def _after_flag(args: list[str], flags: set[str]) -> str | None:
    """The word after the first of `flags` (also written joined, as `-cCODE` or `-ec`)."""
    for index, arg in enumerate(args):
        if arg in flags:
            return args[index + 1] if index + 1 < len(args) else None
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            letters = arg[1:]
            for flag in flags:
                if len(flag) == 2 and flag[1] in letters:
                    tail = letters[letters.index(flag[1]) + 1:]
                    if tail and not tail.isalpha():
                        return tail
                    return args[index + 1] if index + 1 < len(args) else None
    return None
