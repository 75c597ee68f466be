"""Work a later stage of the build needs, done on a thread while the build waits on a child.

Once cargo has run, the library's copy is run by the probe child in the namespaces the
containment probe found (an `unshare … true`, ~10 ms), then the SBOM renderer
(cyclonedx-python-lib, ~0.1 s of imports) renders the graph. The containment is probed on a
thread from the start of the build (a process to wait for, next to no Python); the renderer
is imported on a thread while the probe child runs, the build's longest wait with nothing
else to do. Imports started earlier, beside rustc and cargo, cost as much as they saved on
the example (measured): the main thread needs the GIL to handle each of those short
children's output and exit, and an import holds it.

Nothing is handed over: the stage that needs the module imports it as usual (an import under
way on the thread is waited for by the import system's module lock; one that failed there is
tried again, and its error raised, where it is needed), and the containment probe is cached
per process (`load.containment`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable

from horon_bundle.load.containment import probe_containment

SBOM_RENDERER = "horon_bundle.assets.sbom_cyclonedx"
# started with the build: a process to wait for, next to no Python (no GIL taken from the
# main thread's own waits on rustc and cargo)
PROBES: list[Callable[[], object]] = [probe_containment]
# started when the probe child runs, the build's longest wait with nothing else to do
IMPORTS: list[Callable[[], object]] = [lambda: importlib.import_module(SBOM_RENDERER)]
_STARTED: dict[str, threading.Thread] = {}


def start_ahead(name: str, steps: list[Callable[[], object]]) -> threading.Thread | None:
    """`steps` on a daemon thread, once per process and name (None: started already)."""
    if name in _STARTED:
        return None
    _STARTED[name] = work_ahead(steps)
    return _STARTED[name]


def work_ahead(steps: list[Callable[[], object]]) -> threading.Thread:
    thread = threading.Thread(target=_quietly, args=(steps,), name="horon-ahead", daemon=True)
    thread.start()
    return thread


def _quietly(steps: list[Callable[[], object]]) -> None:
    for step in steps:
        with contextlib.suppress(Exception):  # the stage that needs it raises it there
            step()
