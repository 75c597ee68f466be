"""`horon-bundle new NAME`: render a plugin workspace, all or nothing, never over anything.

The workspace is rendered into a staging directory beside its final place, then renamed
onto a name that must not exist (renameat2 RENAME_NOREPLACE where the system has it), so an
interrupted or refused `new` leaves nothing behind and never touches an existing file. Like
`cargo new`, the new directory becomes a git repository unless it already lies in one (or
git is missing, or `--no-git`).
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path

import horon_bundle
from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import rename_no_replace, staging_directory, write_failed
from horon_bundle.core.process import run_quiet
from horon_bundle.core.shipped import TEMPLATES, shipped
from horon_bundle.scaffold.pin import INSTALL_SCRIPT, Pin, current_pin
from horon_bundle.scaffold.templates import (
    FILES,
    LICENSE_TEMPLATES,
    LICENSES,
    Names,
    license_text,
    names_for,
    substitute,
)

# names rustc, cargo or Windows cannot take as a crate or file name
_RESERVED = frozenset({
    "core", "std", "alloc", "proc-macro", "proc_macro", "test", "build", "deps", "examples",
    "con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
})
_RUST_KEYWORDS = frozenset({
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final",
    "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
})


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRequest:
    name: str
    directory: Path | None = None  # default: ./NAME
    license: str = "Apache-2.0"
    git: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class NewResult:
    workspace: Path
    names: Names
    files: tuple[str, ...]
    git: bool
    pin: Pin  # how the release workflow installs horon-bundle (scaffold/pin.py)


def check_name(name: str) -> None:
    if not identifiers.PLUGIN_ID.fullmatch(name):
        raise Refused.one(codes.NEW_NAME, f"{name!r} is not a plugin id: lowercase letters, "
                                          "digits and '-', starting with a letter, 2 to 63 "
                                          "characters")
    if name in _RESERVED or name.replace("-", "_") in _RUST_KEYWORDS or keyword.iskeyword(name):
        raise Refused.one(codes.NEW_NAME, f"{name!r} cannot name a Rust crate (a keyword or a "
                                          "reserved name)", "Choose a more specific name, "
                                                            "e.g. acme-notes.")
    if name.endswith("-") or "--" in name:
        raise Refused.one(codes.NEW_NAME, f"{name!r}: no '-' at the end and no '--' (the "
                                          "tool names are `<id>__<tool>`)")


def render(names: Names, pin: Pin) -> dict[str, bytes]:
    """Every file of the new workspace (relative path -> bytes), from the shipped templates."""
    root = shipped(TEMPLATES)
    if root is None:
        raise Refused.one(codes.NEW_TEMPLATES, "the templates shipped with horon-bundle are "
                                               "missing")
    rendered: dict[str, bytes] = {}
    for target, source in sorted(FILES.items()):
        rendered[target] = substitute(_read(root, source), names).encode("utf-8")
    rendered["LICENSE"] = license_text(_read(root, LICENSE_TEMPLATES[names.license]),
                                       names).encode("utf-8")
    rendered[INSTALL_SCRIPT] = pin.script(horon_bundle.__version__).encode("utf-8")
    return dict(sorted(rendered.items()))


def _read(root: Path, relative: str) -> str:
    try:
        return (root / relative).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused.one(codes.NEW_TEMPLATES,
                          f"shipped template {relative} cannot be read: {exc}") from None


def _inside_git(directory: Path) -> bool:
    done = run_quiet(["git", "-C", str(directory), "rev-parse", "--is-inside-work-tree"])
    return done.ok and done.stdout.strip() == "true"


def new_workspace(request: NewRequest) -> NewResult:
    check_name(request.name)
    if request.license not in LICENSES:
        raise Refused.one(codes.USAGE_INVALID, f"--license {request.license!r}: expected one "
                                               f"of {', '.join(LICENSES)}")
    names = names_for(request.name, request.license)
    final = (request.directory or Path(request.name)).absolute()
    if final.exists() or final.is_symlink():
        raise Refused.one(codes.NEW_EXISTS, f"{final} already exists; nothing was written")
    pin = current_pin()
    files = render(names, pin)
    parent = final.parent
    git = request.git and not _inside_git(parent if parent.is_dir() else Path.cwd())
    with staging_directory(parent, f".{final.name}.new-") as staging:
        for relative, data in files.items():
            path = staging / relative
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                path.chmod(0o755 if relative == INSTALL_SCRIPT else 0o644)
            except OSError as exc:
                raise write_failed(path, exc) from None
        if git:
            git = run_quiet(["git", "init", "-q", str(staging)]).ok
        try:
            rename_no_replace(staging, final)
        except FileExistsError:
            raise Refused.one(codes.NEW_EXISTS, f"{final} appeared while it was being "
                                                "written; nothing was written") from None
        except OSError as exc:
            raise write_failed(final, exc) from None
    return NewResult(workspace=final, names=names, files=tuple(files), git=git, pin=pin)
