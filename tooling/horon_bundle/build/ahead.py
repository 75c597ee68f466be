"""Work a later stage of the build needs, done on a thread while this stage waits on cargo.

Once cargo has run, the library is judged and bundled: the SBOM renderer
(cyclonedx-python-lib, ~0.1 s of imports) renders the graph, the probe child runs in the
namespaces the containment probe found (an `unshare … true`, ~10 ms), and the bundle stage
(assembly, the verifier of the self-check, the archive writer; ~0.1 s of imports) makes the
bundle. All three are started when a build starts, on a thread of their own: the main thread
is waiting on rustc and cargo meanwhile, not holding the GIL, so they cost the build no wall
time. Nothing is handed over: the stage that needs the module imports it as usual (an import
under way on the thread is waited for by the import system's module lock; one that failed
there is tried again, and its error raised, where it is needed), and the containment probe
is cached per process (`load.containment`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable

from horon_bundle.load.containment import probe_containment

SBOM_RENDERER = "horon_bundle.assets.sbom_cyclonedx"
BUNDLE_STAGE = "horon_bundle.build.bundle"
AHEAD: list[Callable[[], object]] = [lambda: importlib.import_module(BUNDLE_STAGE),
                                     lambda: importlib.import_module(SBOM_RENDERER),
                                     probe_containment]
_STARTED: list[threading.Thread] = []


def start_ahead() -> threading.Thread | None:
    """`AHEAD` on a daemon thread, once per process (None: started already)."""
    if _STARTED:
        return None
    _STARTED.append(work_ahead(AHEAD))
    return _STARTED[0]


def work_ahead(steps: list[Callable[[], object]]) -> threading.Thread:
    thread = threading.Thread(target=_quietly, args=(steps,), name="horon-ahead", daemon=True)
    thread.start()
    return thread


def _quietly(steps: list[Callable[[], object]]) -> None:
    for step in steps:
        with contextlib.suppress(Exception):  # the stage that needs it raises it there
            step()
