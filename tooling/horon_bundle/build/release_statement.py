"""Writing the release statement of one build run beside its archives (docs/release-statement.md).

A statement left in the output directory by an earlier run that names an archive this run
rewrote is stale — it binds a name to bytes no longer there — and is removed, as stale
signatures are; statements naming only other archives stay (another plugin built into the
same directory).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import horon_bundle
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import write_atomic
from horon_bundle.core.inputs import read_input
from horon_bundle.model.release_statement import (
    MAX_STATEMENT_FILE_BYTES,
    STATEMENT_SUFFIX,
    RunIdentity,
    parse_statement_file,
    statement_document,
    statement_lines,
    statement_name,
)
from horon_bundle.model.sidefiles import SIGNATURE_SUFFIX


def write_build_statement(out: Path, archives: Mapping[str, str],
                          run: RunIdentity) -> tuple[Path, tuple[str, ...]]:
    """Write `horon-build-<hex>.intoto.jsonl` naming `archives` (file name -> sha256) into
    `out`; the path and notes on stale statements removed."""
    target = out / statement_name(archives)
    notes = []
    for path in sorted(out.iterdir()):
        if (path == target or not path.name.endswith(STATEMENT_SUFFIX)
                or path.name.startswith(".") or path.is_symlink() or not path.is_file()):
            continue
        try:
            data = read_input(path, limit=MAX_STATEMENT_FILE_BYTES, what="statement",
                              follow_symlinks=False)
            assert data is not None
            named = {n for s in parse_statement_file(data, source=path.name) for n in s.subjects}
        except Refused:
            continue  # not ours to judge here: publish names it
        rewritten = sorted(named & set(archives))
        if rewritten:
            path.unlink()
            signature = path.with_name(path.name + SIGNATURE_SUFFIX)
            if signature.is_file() and not signature.is_symlink():
                signature.unlink()
            notes.append(f"removed the stale release statement {path.name}: it named "
                         f"{rewritten[0]}" + (f" and {len(rewritten) - 1} more"
                                              if len(rewritten) > 1 else "")
                         + ", which this build rewrote")
    write_atomic(target, statement_lines([statement_document(archives, run,
                                                             horon_bundle.__version__)]))
    return target, tuple(notes)
