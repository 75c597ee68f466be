"""A test-only fault hook: stop or kill this process at a named step (docs/interrupted-runs.md).

Honoured only when `HORON_TEST_CHECKPOINT` names the step: `kill:STEP` sends this process
SIGKILL there (a real, uncatchable kill mid-run, as a power cut or `kill -9` would leave it),
`pause:STEP` stops it there until it is killed (a live run holding its temporary files, for
tests of what a concurrent run may clean). Unset, a checkpoint is one dictionary look-up.
"""

from __future__ import annotations

import os
import signal
import sys
import time

ENVIRONMENT = "HORON_TEST_CHECKPOINT"


def checkpoint(step: str) -> None:
    wanted = os.environ.get(ENVIRONMENT)
    if not wanted:
        return
    action, _, name = wanted.partition(":")
    if name != step:
        return
    sys.stderr.flush()
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "pause":
        while True:  # until a test kills us
            time.sleep(3600)
