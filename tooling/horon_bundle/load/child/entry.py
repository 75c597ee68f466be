"""The child process that loads a plugin library; the toolchain itself never loads one.

Run as `python -I -B -c BOOTSTRAP PACKAGE_PARENT MODE LIBRARY [ARGUMENT-JSON]`. Before anything
is loaded it limits its own resources (`RLIMIT_AS` to the argument's `memory_limit`, no core
files) and splits in two (see `keeper`): the *worker* loads the library, its parent only
waits for it and then ends every process the library left behind. In the worker, file
descriptor 1 is pointed at stderr before the library is loaded, so nothing the library prints
can pass for an answer; the one JSON answer goes to the saved original stdout. A crash or
hang ends this process tree, and the parent (the toolchain) reports it.
"""

from __future__ import annotations

import json
import os
import sys

from horon_bundle.load.child import doctor, keeper, loading

TYPE_CHECKING = False  # not typing's: the child does not import typing (its start-up)
if TYPE_CHECKING:
    from typing import Any

_answer_fd = -1


def _answer(document: dict[str, Any]) -> None:
    data = (json.dumps(document, sort_keys=True) + "\n").encode("utf-8")
    while data:
        data = data[os.write(_answer_fd, data):]


MODES = {"handshake": loading.mode_handshake, "doctor": doctor.mode_doctor}


def main(argv: list[str]) -> int:
    global _answer_fd  # noqa: PLW0603 - the answer channel is set once, before loading
    mode, library = argv[0], argv[1]
    argument = json.loads(argv[2]) if len(argv) > 2 else {}
    keeper.limit_resources(argument.get("memory_limit"))
    keeper.split()  # returns in the worker only
    _answer_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        answer = MODES[mode](library, argument)
    except OSError as exc:  # dlopen failure
        answer = {"step": "load", "error": str(exc)}
    _answer(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
