"""Two stages of a run's items overlapped: the cargo step of the next plugin on this thread
while one worker thread bundles the previous one (its probe child, SBOM, staged verify and
archive; hashing, zlib and the waits for child processes release the GIL).

The outcome is the sequential one: results in item order, the first failure in item order is
the one raised, every item before it is finished (as a sequential run would have left it), no
item after it is bundled, and no cargo step starts once a bundling step is known to have
failed (the one already running when it failed finishes; nothing of it is written).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from horon_bundle.core.reporter import Reporter

Item = TypeVar("Item")
Middle = TypeVar("Middle")
Result = TypeVar("Result")


def overlapped(items: Sequence[Item], first: Callable[[Item], Middle],
               second: Callable[[Item, Middle], Result]) -> list[Result]:
    """`first(item)` in order on this thread, `second(item, middle)` in order on one worker;
    no `second` runs after one has failed (the items after it are never finished)."""
    failed = threading.Event()

    def guarded(item: Item, middle: Middle) -> Result:
        if failed.is_set():
            raise _Skipped
        try:
            return second(item, middle)
        except BaseException:
            failed.set()
            raise

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="horon-bundle") as pool:
        pending: list[Future[Result]] = []
        try:
            for item in items:
                if failed.is_set():
                    break  # an earlier item failed: its error is raised below, in order
                middle = first(item)
                pending.append(pool.submit(guarded, item, middle))
        except Exception:
            for future in pending:  # earlier items: finished first, their failure wins
                earlier = future.exception()
                if earlier is not None:
                    raise earlier from None
            raise
        except BaseException:  # an interrupt: what is queued is not started
            failed.set()
            raise
        try:
            return [future.result() for future in pending]  # the first failure, in order
        except BaseException as stopped:
            if not isinstance(stopped, Exception):
                failed.set()
            raise


class _Skipped(Exception):
    """An item after a failed one: raised only behind that failure, which is reported."""


class SerialReporter:
    """A reporter both threads may call: one call at a time."""

    def __init__(self, reporter: Reporter) -> None:
        self._reporter = reporter
        self._lock = threading.Lock()

    def step(self, text: str) -> None:
        with self._lock:
            self._reporter.step(text)

    def detail(self, text: str) -> None:
        with self._lock:
            self._reporter.detail(text)

    def note(self, text: str) -> None:
        with self._lock:
            self._reporter.note(text)
