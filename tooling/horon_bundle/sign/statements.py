"""Release statement files read from disk and merged (`horon-bundle statement merge`).

The jobs of a release workflow each write the statement of their build; after their `dist/`
directories are downloaded into one, `merge` joins those of the run into one release
statement — one Statement, whose subjects are every archive — which `sign` signs once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import write_atomic
from horon_bundle.core.inputs import read_input
from horon_bundle.model.release_statement import (
    MAX_STATEMENT_FILE_BYTES,
    STATEMENT_SUFFIX,
    ReleaseStatement,
    merge_statements,
    parse_statement_file,
    statement_lines,
)


def read_statement_file(path: Path) -> list[ReleaseStatement]:
    data = read_input(path, limit=MAX_STATEMENT_FILE_BYTES, what="statement",
                      follow_symlinks=False)
    assert data is not None
    return parse_statement_file(data, source=path.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class Merged:
    path: Path
    subjects: dict[str, str]
    inputs: tuple[Path, ...]


def merge_statement_files(paths: list[Path], out: Path) -> Merged:
    """Write one Statement naming every archive the statements in `paths` name into `out`."""
    if not out.name.endswith(STATEMENT_SUFFIX):
        raise Refused.one(codes.USAGE_INVALID, f"--out {out.name}: a release statement's name "
                                               f"ends with {STATEMENT_SUFFIX}")
    resolved_out = out.resolve()
    statements: list[tuple[str, ReleaseStatement]] = []
    for path in paths:
        if path.resolve() == resolved_out:
            continue  # a merge run again over dist/*.intoto.jsonl: the earlier result is input
        statements += [(path.name, s) for s in read_statement_file(path)]
    document = merge_statements(statements)
    write_atomic(out, statement_lines([document]))
    subjects = {s["name"]: s["digest"]["sha256"] for s in document["subject"]}
    return Merged(path=out, subjects=subjects, inputs=tuple(paths))
