"""Timing and peak memory of child processes, interleaved with their baselines.

Each run is a child process: its wall time from `time.perf_counter` around it and its peak
RSS as GNU `time` (`/usr/bin/time -f %M`) reports it. Not `os.wait4` here: Linux counts in a
child's `ru_maxrss` the memory of the process it was forked from until its `exec` (the
driver's, tens of MiB), so a child's figure could never fall below the driver's and a
memory row could not fail for the reason it exists. `time` is a small C program: the floor
it leaves in its child's figure is its own (about 1 MiB). A row runs
its subject and its baseline alternately, `rounds` times each, so that load from other work
on the machine falls on both; the figure is the ratio of the medians.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

Command = Sequence[str | Path]
GNU_TIME = Path("/usr/bin/time")  # Debian package `time`


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    peak_kib: int
    stderr: str
    cpu_seconds: float = 0.0  # user + system of the child and what it waited for


def run(command: Command, *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
        check: bool = True) -> Run:
    """One child: wall time, its own peak RSS (KiB), its stderr with a time stamp per line."""
    with tempfile.NamedTemporaryFile(prefix="horon-bench-rss-") as figure:
        start = time.perf_counter()
        with subprocess.Popen([str(GNU_TIME), "-f", "%M %U %S", "-o", figure.name,
                               *(str(part) for part in command)], env=dict(env or os.environ),
                              cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) as child:
            assert child.stderr is not None
            lines = [f"{time.perf_counter() - start:.4f} {line.decode(errors='replace')}"
                     for line in child.stderr]
            returncode = child.wait()
        seconds = time.perf_counter() - start
        written = Path(figure.name).read_text().split()
    if check and returncode != 0:
        raise RuntimeError(f"{command[0]} … exited {returncode}: {''.join(lines)[-3000:]}")
    # `time` writes "Command exited with non-zero status N" before the figures on a failure
    figures = written[-3:] if len(written) >= 3 and written[-3].isdigit() else ["0", "0", "0"]
    return Run(seconds=seconds, peak_kib=int(figures[0]), stderr="".join(lines),
               cpu_seconds=float(figures[1]) + float(figures[2]))


@dataclass(slots=True)
class Pair:
    subject: list[Run] = field(default_factory=list)
    baseline: list[Run] = field(default_factory=list)

    @property
    def subject_s(self) -> float:
        return statistics.median(r.seconds for r in self.subject)

    @property
    def baseline_s(self) -> float:
        return statistics.median(r.seconds for r in self.baseline)

    @property
    def ratio(self) -> float:
        return self.subject_s / self.baseline_s

    @property
    def cpu_ratio(self) -> float:
        """Median CPU seconds (user + system) of the subject ÷ the baseline's: what the
        operation costs, which a loaded machine distorts less than wall time."""
        subject = statistics.median(r.cpu_seconds for r in self.subject)
        baseline = statistics.median(r.cpu_seconds for r in self.baseline)
        return subject / baseline if baseline > 0 else float("inf")

    @property
    def subject_peak_kib(self) -> int:
        return max(r.peak_kib for r in self.subject)


def interleaved(subject: Callable[[int], Run], baseline: Callable[[int], Run], rounds: int,
                *, warm: bool = True) -> Pair:
    """Alternate subject and baseline (one untimed warm-up each); medians of `rounds`."""
    if warm:
        subject(-1)
        baseline(-1)
    pair = Pair()
    for number in range(rounds):
        first, second = (subject, baseline) if number % 2 == 0 else (baseline, subject)
        a, b = first(number), second(number)
        pair.subject.append(a if first is subject else b)
        pair.baseline.append(b if first is subject else a)
    return pair


def phase_seconds(stderr: str, start: str, end: str) -> float:
    """Seconds between the first stderr line containing `start` and the last containing
    `end` (the CLI's progress lines, time-stamped by `run`)."""
    stamps = [(float(line.split(" ", 1)[0]), line) for line in stderr.splitlines() if line]
    begin = next(t for t, line in stamps if start in line)
    finish = [t for t, line in stamps if end in line][-1]
    return finish - begin
