"""Test-only pause points: how the tests stop an install at a chosen step (docs/install.md).

Honoured only when `HORON_INSTALL_PAUSE_AT` names the step: the process then creates the file
named by `HORON_INSTALL_PAUSE_FILE` and waits (at most `_LIMIT` seconds) until that file is
removed. A test SIGKILLs the process while it waits (kill at every step), or changes the home
and removes the file (a symlink swapped in between check and write). The pause changes no
behaviour: it only waits.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

PAUSE_AT = "HORON_INSTALL_PAUSE_AT"
PAUSE_FILE = "HORON_INSTALL_PAUSE_FILE"
# every step a test can stop at, in the order an install passes them
STEPS = (
    "hashed",         # an archive's SHA-256 is taken; its verification is next
    "walked",         # the home's directories are open and checked; nothing staged yet
    "copying",        # the first file of the bundle is in the staging directory
    "staged",         # every file is copied and fsynced; the copy is not yet re-verified
    "before-rename",  # the staged copy re-verified; the rename onto the final name is next
    "renamed",        # the version is in place; the state file is not yet updated
    "state-replace",  # a new state file is written and fsynced; its rename is next
    "trashed",        # uninstall: the version is renamed away (a harness bundle: its record
                      # is removed); its removal is next
    "unpacked",       # fetch: every file is in the staging directory, verified; the rename
                      # onto DIR is next
)
_LIMIT = 120.0


def pause(step: str) -> None:
    if step not in STEPS:
        raise RuntimeError(f"unknown pause step {step!r}")
    if os.environ.get(PAUSE_AT) != step:
        return
    marker = os.environ.get(PAUSE_FILE)
    if not marker or not Path(marker).is_absolute():
        raise Refused.one(codes.ENVIRONMENT_VALUE,
                          f"{PAUSE_AT}={step} needs {PAUSE_FILE} naming an absolute path")
    Path(marker).write_text(f"{os.getpid()}\n")
    deadline = time.monotonic() + _LIMIT
    while Path(marker).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
