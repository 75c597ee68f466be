"""Importing a module a later stage of the build needs while this stage waits on cargo.

The SBOM renderer (cyclonedx-python-lib, ~0.1 s of imports) is needed only after cargo has
run and the probe child has answered: imported on a thread of its own meanwhile, it costs the
build no wall time (the main thread is waiting on a child, not holding the GIL). The stage
that needs it imports it as usual: an import under way on the thread is waited for by the
import system's own module lock, and one that failed there is simply tried again (and its
error raised) where it is needed.
"""

from __future__ import annotations

import contextlib
import importlib
import threading


def import_ahead(module: str) -> None:
    threading.Thread(target=_import_quietly, args=(module,), name="horon-import-ahead",
                     daemon=True).start()


def _import_quietly(module: str) -> None:
    with contextlib.suppress(Exception):  # the stage that needs it raises it there
        importlib.import_module(module)
