"""The process's one worker thread: a second core for stream work (read ahead, hash behind).

hashlib, zlib, `pread` and `copy_file_range` release the GIL on large buffers, so work handed
to this thread runs beside the caller's. One worker: its tasks run one at a time, in the
order given, which is what a stream's chunks need.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_WORKER: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def worker() -> ThreadPoolExecutor:
    """The shared worker, started on first use (`concurrent.futures` is imported then: a
    command that streams nothing large never pays for it at start-up)."""
    global _WORKER  # noqa: PLW0603 - started on first use, shared by every stream
    with _LOCK:
        if _WORKER is None:
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - see above

            _WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="horon-stream")
        return _WORKER
