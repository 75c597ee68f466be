"""A lint for unpinned installs in the workflows (and the install scripts they run) that we
ship or generate: `pip`/`pip3`/`python -m pip`/`uv pip`/`uv tool`/`pipx`/`uvx` installing a
name from an index without hashes or a commit, and a download piped into a shell. actionlint
and zizmor check action pins and expressions; neither looks at what a `run:` step installs.

Accepted: `-r FILE` with `--require-hashes` where every requirement of FILE carries a
`--hash` (nested `-r` followed); `NAME @ git+https://HOST/PATH@<40-hex commit>`; a local path
(`.`, `./x`, a wheel file) installed with `--no-deps` or `--no-index`. Refused: anything else,
a `$VARIABLE` included (what it holds is not in the file).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_COMMIT_URL = re.compile(r"[A-Za-z0-9._-]+ ?@ ?git\+https://[^\s@]+@[0-9a-f]{40}")
_PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
_SEPARATORS = re.compile(r"&&|\|\||;|\|")


def run_texts(workflow: str) -> list[str]:
    """Every `run:` script of a workflow (block scalars included), as shell text."""
    texts: list[str] = []
    lines = workflow.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        match = re.match(r"^(\s*)(?:- )?run:\s*(.*)$", line)
        index += 1
        if not match:
            continue
        indent, rest = len(match.group(1)), match.group(2)
        if rest and rest[0] not in "|>":
            texts.append(rest)
            continue
        block = []
        while index < len(lines) and (not lines[index].strip()
                                      or len(lines[index]) - len(lines[index].lstrip()) > indent):
            block.append(lines[index].strip())
            index += 1
        texts.append(("\n" if rest.startswith("|") else " ").join(block))
    return texts


def _commands(text: str) -> list[list[str]]:
    text = text.replace("\\\n", " ")
    commands = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
        for part in _SEPARATORS.split(line):
            try:
                words = shlex.split(part)
            except ValueError:
                words = part.split()
            while words and (("=" in words[0] and not words[0].startswith("-"))
                             or words[0] in ("exec", "sudo", "env")):
                words = words[1:]
            if words:
                commands.append(words)
    return commands


def _install_arguments(words: list[str]) -> list[str] | None:
    """The arguments of an install command, or None when `words` installs nothing."""
    if words[0] in ("python", "python3", "py") and words[1:3] == ["-m", "pip"]:
        words = ["pip", *words[3:]]
    if words[0] in ("pip", "pip3") and words[1:2] == ["install"]:
        return words[2:]
    if words[0] == "uv" and words[1:3] in (["pip", "install"], ["tool", "install"],
                                           ["tool", "run"]):
        return words[3:]
    if words[0] == "pipx" and words[1:2] in (["install"], ["run"]):
        return words[2:]
    if words[0] == "uvx":
        return words[1:]
    return None


def _requirements_hashed(path: Path, seen: set[Path]) -> list[str]:
    if path in seen:
        return []
    seen.add(path)
    if not path.is_file():
        return [f"{path}: the requirements file does not exist"]
    problems = []
    for raw in path.read_text().replace("\\\n", " ").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith(("-r ", "--requirement ")):
            problems += _requirements_hashed(path.parent / line.split(None, 1)[1], seen)
        elif "--hash=sha256:" not in line and not _COMMIT_URL.fullmatch(line):
            problems.append(f"{path.name}: {line!r} has no --hash")
    return problems


def install_problems(text: str, base: Path) -> list[str]:
    """What installs unpinned in shell `text` (requirements files relative to `base`)."""
    problems = [f"a download piped into a shell: {m.group(0)!r}"
                for m in _PIPE_TO_SHELL.finditer(text)]
    for words in _commands(text):
        arguments = _install_arguments(words)
        if arguments is None:
            continue
        shown = " ".join(words)
        hashes = "--require-hashes" in arguments
        local_only = "--no-deps" in arguments or "--no-index" in arguments
        position = 0
        while position < len(arguments):
            argument = arguments[position]
            position += 1
            if argument in ("-r", "--requirement"):
                requirements = base / arguments[position]
                position += 1
                if not hashes:
                    problems.append(f"{shown}: -r without --require-hashes")
                problems += _requirements_hashed(requirements, set())
            elif argument.startswith("-"):
                if argument in ("-c", "--constraint", "-i", "--index-url", "--extra-index-url",
                                "-e", "--editable", "--python"):
                    position += 1
            elif _COMMIT_URL.fullmatch(argument):
                continue
            elif argument.startswith(("./", "/")) or argument == "." \
                    or argument.endswith(".whl"):
                if not local_only:
                    problems.append(f"{shown}: a local path whose dependencies come unpinned "
                                    "from an index (add --no-deps and install them by hashes)")
            else:
                problems.append(f"{shown}: {argument!r} is installed by name, not by hashes "
                                "or a commit")
    return problems


def workflow_problems(workflow: Path, root: Path) -> list[str]:
    """Unpinned installs in a workflow and in the scripts of `root` its steps run."""
    problems = []
    for text in run_texts(workflow.read_text()):
        problems += install_problems(text, root)
        for words in _commands(text):
            if words[0] in ("sh", "bash") and len(words) > 1 and words[1].endswith(".sh"):
                script = root / words[1]
                if not script.is_file():
                    problems.append(f"{words[1]}: the script the workflow runs is missing")
                else:
                    problems += [f"{words[1]}: {p}" for p in
                                 install_problems(script.read_text(), root)]
    return problems
