"""The output directory of a run: claimed for the run, and cleaned of what killed runs left.

`build` and `compile` keep their temporary things inside the output directory, next to what
they produce (so that the final rename never crosses a file system): `.horon-scratch-*`
(the libraries of a run), `.<bundle>.staging-*` and `.<name>.compiled.staging-*` (a bundle
or record being assembled), `.<archive>.partial` (an archive being written),
`.<file>.*.horon-tmp` (an atomic write) and `.<bundle>.old-<pid>` (the previous bundle while
it is swapped for the new one). A run killed mid-way leaves them behind. The next run claims
the directory with `core.files.lease_directory`: when no other live run holds it, it removes
them, and puts back a previous bundle that a kill left only under its `.old-<pid>` name;
beside a live run it touches nothing (docs/interrupted-runs.md).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from horon_bundle.core.files import TEMP_SUFFIX, lease_directory, remove_tree, write_failed
from horon_bundle.core.reporter import Reporter

SCRATCH_PREFIX = ".horon-scratch-"
_DEBRIS = re.compile(r"\..+\.staging-[A-Za-z0-9_]+|\..+\.partial|\..+"
                     + re.escape(TEMP_SUFFIX))
_ASIDE = re.compile(r"\.(.+)\.old-[0-9]+")


def remove_debris(out: Path) -> list[Path]:
    """Remove (or, for a previous bundle kept aside, restore) what killed runs left in `out`.
    Only for a caller that holds `out` exclusively."""
    found: list[Path] = []
    for path in sorted(out.iterdir()):
        name = path.name
        if path.is_symlink():
            continue
        aside = _ASIDE.fullmatch(name)
        if aside is not None and path.is_dir():
            final = out / aside.group(1)
            if not final.exists() and not final.is_symlink():
                path.rename(final)  # the kill came between the two renames: put it back
            else:
                remove_tree(path)
        elif name.startswith(SCRATCH_PREFIX) or _DEBRIS.fullmatch(name):
            if path.is_dir():
                remove_tree(path)
            else:
                path.unlink(missing_ok=True)
        else:
            continue
        found.append(path)
    return found


@contextlib.contextmanager
def output_session(out: Path, reporter: Reporter) -> Iterator[None]:
    """Create `out`, hold it for this run, after cleaning it when no other run is live."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_failed(out, exc) from None
    try:
        lease = lease_directory(out, remove_debris)
    except OSError as exc:
        raise write_failed(out, exc) from None
    with lease:
        if lease.removed:
            names = ", ".join(path.name for path in lease.removed[:5])
            more = f" and {len(lease.removed) - 5} more" if len(lease.removed) > 5 else ""
            reporter.note(f"removed what an interrupted run left in {out}: {names}{more}")
        yield
