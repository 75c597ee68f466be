"""Judging side effects: what the library wrote and where it connected, phase by phase.

Policy (docs/doctor.md):
- load, handshake, refusal matrix, describe: nothing written anywhere, no connection;
- create: writes only inside the instance directory, no connection;
- tool call and release: writes only inside the instance directory; connections allowed
  (an operation may talk upstream) and listed as notes;
- shutdown, destroy, unload: writes only inside the instance directory, no connection.
Without a tracer, the child's HOME (also its working directory) and the config directory are
compared before and after the run instead, and the network check is skipped.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.doctor.trace import Offence

NOTHING_WRITTEN = frozenset({"load", "handshake", "refusals", "describe"})
NETWORK_ALLOWED = frozenset({"tool-call", "release"})


@dataclass(frozen=True, slots=True)
class ChildDirs:
    """The child's temporary directories: its HOME (and working directory), the instance
    directory and the config directory a run of the library is given."""

    home: Path
    instance: Path
    config: Path

    def show(self, path: str) -> str:
        """A path with the doctor's temporary directories replaced by their roles."""
        for name, root in (("$INSTANCE_DIR", self.instance), ("$CONFIG_DIR", self.config),
                           ("$HOME", self.home)):
            text = str(root)
            if path == text or path.startswith(text + "/"):
                return name + path[len(text):]
        return path

    def in_instance(self, path: str) -> bool:
        root = str(self.instance)
        return path == root or path.startswith(root + "/")


def judge_trace(report: DoctorReport, found: list[Offence], dirs: ChildDirs) -> None:
    """One finding per distinct offending call (path or address), naming its phases."""
    grouped: dict[tuple[str, str, str, str, str], list[str]] = {}
    for offence in found:
        key = (offence.kind, offence.syscall, offence.target, offence.detail,
               _result(offence.result))
        grouped.setdefault(key, []).append(offence.phase)
    writes: list[Finding] = []
    network: list[Finding] = []
    for (kind, syscall, target, detail, result), phases in grouped.items():
        if kind == "write":
            offending = [p for p in phases
                         if p in NOTHING_WRITTEN or not dirs.in_instance(target)]
        else:
            offending = [p for p in phases if p not in NETWORK_ALLOWED]
            for phase in sorted(set(phases) - set(offending)):
                report.notes.append(f"during {phase}: {syscall} {target} = {result} "
                                    "(allowed in an operation)")
        if not offending:
            continue
        names = ", ".join(dict.fromkeys(offending))
        times = f" ({len(offending)} calls)" if len(offending) > 1 else ""
        flags = f" {detail}" if detail else ""
        message = f"during {names}: {syscall} {dirs.show(target)}{flags} = {result}{times}"
        if kind == "write":
            writes.append(Finding(codes.DOCTOR_SIDE_EFFECT_WRITE, message))
        else:
            network.append(Finding(codes.DOCTOR_SIDE_EFFECT_NETWORK, message))
    report.judged("side-effects.write", writes,
                  expected="no write while loaded/described; later only in $INSTANCE_DIR",
                  got=f"{len(writes)} offending call site(s)", note="traced with strace")
    report.judged("side-effects.network", network,
                  expected="no connection before an operation",
                  got=f"{len(network)} offending call site(s)", note="traced with strace")


def _result(text: str) -> str:
    """`5</tmp/x>` -> `5`: the descriptor's path is already in the message."""
    return re.sub(r"<[^>]*>\Z", "", text).strip()


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Relative path -> (mode, size, mtime_ns) of everything under `root`, links not followed."""
    found: dict[str, tuple[int, int, int]] = {}
    for directory, names, files in os.walk(root):
        for name in [*names, *files]:
            path = Path(directory) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            found[path.relative_to(root).as_posix()] = (
                stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns)
    return found


def judge_snapshots(report: DoctorReport, dirs: ChildDirs,
                    before: dict[str, dict[str, tuple[int, int, int]]], why: str) -> None:
    """The no-tracer fallback: HOME and the config directory must be as they were."""
    writes: list[Finding] = []
    for label, root in (("$HOME", dirs.home), ("$CONFIG_DIR", dirs.config)):
        after = snapshot(root)
        earlier = before.get(label, {})
        for path in sorted(set(after) | set(earlier)):
            if path not in earlier:
                change = "created"
            elif path not in after:
                change = "removed"
            elif after[path] != earlier[path]:
                change = "changed"
            else:
                continue
            writes.append(Finding(codes.DOCTOR_SIDE_EFFECT_WRITE,
                                  f"{label}/{path} was {change} (phase unknown: no tracer)"))
    report.judged("side-effects.write", writes, expected="$HOME and $CONFIG_DIR unchanged",
                  got=f"{len(writes)} change(s)",
                  note=f"{why}: only $HOME and $CONFIG_DIR were compared before and after; "
                       "writes elsewhere and the phase of a write are not observed")
    report.skipped("side-effects.network", f"{why}: connections are not observed")
