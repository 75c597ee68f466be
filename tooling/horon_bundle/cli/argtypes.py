"""Argument types shared by commands: malformed values are usage errors (exit 2)."""

from __future__ import annotations

import argparse
import math

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
