"""Argument types shared by commands: malformed values are usage errors (exit 2)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

MAX_SECONDS = 86_400.0  # one day: beyond it a deadline overflows the clocks and timers using it


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 and at most one day (`--timeout`,
    `--probe-timeout`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number above 0")
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r}: at most {MAX_SECONDS:.0f} seconds (a day)")
    return value


def named_path(text: str) -> Path:
    """A file or directory named on the command line (every path argument of every command):
    an empty value is refused, since `Path("")` is the current directory and would silently
    make it the agent home, the output folder or the bundle read."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path; name the file or directory (use . "
                                         "for the current directory)")
    return Path(text)


def mebibytes(text: str) -> int:
    """A whole number of MiB for a limit (`--memory-limit`), within its documented bounds."""
    from horon_bundle.load.containment import (  # noqa: PLC0415 - only doctor needs it
        MAX_MEMORY_LIMIT_MIB,
        MIN_MEMORY_LIMIT_MIB,
    )

    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of MiB") from None
    if not MIN_MEMORY_LIMIT_MIB <= value <= MAX_MEMORY_LIMIT_MIB:
        raise argparse.ArgumentTypeError(f"{text!r}: must be {MIN_MEMORY_LIMIT_MIB} to "
                                         f"{MAX_MEMORY_LIMIT_MIB} MiB")
    return value
