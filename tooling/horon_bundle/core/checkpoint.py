"""The test-only hook: stop, kill or hold this process at a named step.

One hook, two ways to ask for it, both honoured at every step of `STEPS`:

- `HORON_TEST_CHECKPOINT=kill:STEP` sends this process SIGKILL at STEP (a real, uncatchable
  kill mid-run, as a power cut or `kill -9` would leave it); `pause:STEP` stops it there until
  it is killed (a live run holding its temporary files, for tests of what a concurrent run
  may clean). docs/interrupted-runs.md.
- `HORON_INSTALL_PAUSE_AT=STEP` with `HORON_INSTALL_PAUSE_FILE` naming an absolute path: at
  STEP the process creates that file (its PID inside) and waits, at most `PAUSE_LIMIT`
  seconds, until the file is removed. A test SIGKILLs it while it waits, or changes what it
  works on and removes the file to let it go on (a symlink swapped in between check and
  write). docs/install.md.

Either way the hook changes no behaviour: it stops or waits, never makes the tool accept
anything. Unset, a checkpoint is a few dictionary look-ups.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

CHECKPOINT = "HORON_TEST_CHECKPOINT"  # kill:STEP or pause:STEP
PAUSE_AT = "HORON_INSTALL_PAUSE_AT"  # STEP, with the marker file below
PAUSE_FILE = "HORON_INSTALL_PAUSE_FILE"
PAUSE_LIMIT = 120.0

# Every step, where it is and what holds when a run stops there. The install steps are in
# the order an install passes them; their names are a stable contract of docs/install.md.
STEPS: dict[str, str] = {
    "build.compiled": "build/library.py: cargo has run and the library is copied; the target "
                      "directory's lock is still held",
    "build.staged": "build/assemble.py: the bundle is staged, not yet verified or renamed",
    "build.swapping": "build/assemble.py: the old bundle is aside, the new one not yet in place",
    "build.archive": "build/archive.py: the archive is half written",
    "publish.temp": "publish/destinations/file_store.py: a .tmp/w-* file exists in a file:// "
                    "store",
    "publish.marketplace": "publish/destinations/file_store.py: every entry of the run is "
                           "committed; the new marketplace.json is a fsynced .tmp/w-* file, "
                           "its rename over the old one is next",
    "publish.log-tiles": "publish/destinations/store_log.py: a tile, entry "
                         "bundle or leaf hint of the log's append is a fsynced .tmp/w-* file, "
                         "its rename is next; the old checkpoint is in place",
    "publish.log-checkpoint": "publish/destinations/store_log.py: every tile "
                              "of the append is in place; the new checkpoint is a fsynced "
                              ".tmp/w-* file, its rename over the old one is next",
    "hashed": "install/admission.py, install/harness_admission.py: an archive's SHA-256 is "
              "taken (a native archive's by its verification, from the bytes judged); the "
              "check that the file is unchanged is next",
    "walked": "install/installer.py, install/harness_installer.py: the home's directories are "
              "open and checked; nothing staged yet",
    "copying": "install/installer.py, install/harness_installer.py: the first file of the "
               "bundle is in the staging directory",
    "staged": "install/installer.py, install/harness_installer.py: every file is copied and "
              "fsynced; the copy is not yet re-verified",
    "before-rename": "install/installer.py, install/harness_installer.py: the staged copy is "
                     "re-verified; the rename onto the final name is next",
    "renamed": "install/installer.py, install/harness_installer.py: the version is in place; "
               "the state file is not yet updated",
    "state-replace": "install/statefile.py: a new state file is written and fsynced; its "
                     "rename is next",
    "trashed": "install/manage.py (uninstall): the version is renamed away (a harness bundle: "
               "its record is removed); its removal is next",
    "unpacked": "install/fetch.py: every file is in the staging directory, verified; the "
                "rename onto DIR is next",
}


def checkpoint(step: str) -> None:
    if step not in STEPS:
        raise RuntimeError(f"unknown checkpoint {step!r}")
    wanted = os.environ.get(CHECKPOINT)
    if wanted:
        action, _, name = wanted.partition(":")
        if name == step:
            _stop(action)
    if os.environ.get(PAUSE_AT) == step:
        _wait_for_marker(step)


def _stop(action: str) -> None:
    sys.stderr.flush()
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "pause":
        while True:  # until a test kills us
            time.sleep(3600)


def _wait_for_marker(step: str) -> None:
    marker = os.environ.get(PAUSE_FILE)
    if not marker or not Path(marker).is_absolute():
        raise Refused.one(codes.ENVIRONMENT_VALUE,
                          f"{PAUSE_AT}={step} needs {PAUSE_FILE} naming an absolute path")
    Path(marker).write_text(f"{os.getpid()}\n")
    deadline = time.monotonic() + PAUSE_LIMIT
    while Path(marker).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
