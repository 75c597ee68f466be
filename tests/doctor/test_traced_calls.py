"""What doctor asks strace for: the judged calls and the marker only, filtered in the kernel.

The trace is only as good as the calls it holds: every call `offences` judges must be traced,
the phase marker must be, and the interpreter's start-up (its stats) need not be. The reader
skips what it would not judge without changing what it finds.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.doctor import trace
from horon_bundle.doctor.trace import (
    JUDGED,
    MARKER_SYSCALLS,
    TRACED,
    offences,
    parse_calls,
    split_args,
)
from horon_bundle.load.host import Tracer, probe_tracer
from tests.doctor.test_syscall_trace import LOG
from tests.helpers import REPO

HAS_STRACE = shutil.which("strace") is not None


def test_every_judged_call_and_the_marker_are_traced() -> None:
    judged = set(trace._OPENS) | set(trace._WRITES) | set(trace._NETWORK)
    assert judged == JUDGED
    assert set(TRACED) == judged | set(MARKER_SYSCALLS)
    options = Tracer("/usr/bin/strace", "", TRACED, seccomp=True).options()
    assert options[0] == "--seccomp-bpf"
    selected = options[options.index("-e") + 1].removeprefix("trace=").split(",")
    assert {name.removeprefix("?") for name in selected} == set(TRACED)


def _split_args_by_character(text: str) -> tuple[list[str], str]:
    """The reader's first split_args, one character at a time: the reference."""
    args: list[str] = []
    depth = 0
    current: list[str] = []
    in_string = escaped = False
    end = len(text)
    for position, char in enumerate(text):
        if in_string:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "([{<":
            depth += 1
        elif char in ")]}>":
            if depth == 0 and char == ")":
                end = position
                break
            depth -= 1
        elif char == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    last = "".join(current).strip()
    if last or args:
        args.append(last)
    rest = text[end + 1:]
    result = rest.split("=", 1)[1].strip() if "=" in rest else rest.strip()
    return args, result


@given(st.text(alphabet='ab ,()[]{}<>"\\=\n\u00e9'))
def test_split_args_by_token_is_split_args_by_character(text: str) -> None:
    assert split_args(text) == _split_args_by_character(text)


def _both(lines: list[str]) -> None:
    every: list[str] = []
    judged: list[str] = []
    assert offences(parse_calls(lines, judged, judged_only=True), cwd="/w") == \
        offences(parse_calls(lines, every), cwd="/w")
    assert judged == every


def test_judged_only_finds_what_the_whole_parse_finds() -> None:
    lines = LOG.splitlines()
    _both(lines)
    skipped = list(parse_calls(lines, judged_only=True))
    assert all(call.phase is not None and call.name in JUDGED for call in skipped)
    assert len(skipped) < len(list(parse_calls(lines)))


@given(st.lists(st.sampled_from(LOG.splitlines()) | st.text(max_size=60), max_size=30))
def test_judged_only_finds_the_same_in_any_log(lines: list[str]) -> None:
    _both(lines)


@pytest.mark.process
@pytest.mark.skipif(not HAS_STRACE, reason="needs strace")
def test_the_traced_calls_catch_each_kind_of_write_and_connection(tmp_path: Path) -> None:
    """Under the options doctor uses, a write of each kind and an inet connection after the
    marker are in the trace, and the start-up's stats are not."""
    tracer = probe_tracer(TRACED)
    assert tracer.seccomp and tracer.syscalls == TRACED, tracer
    log = tmp_path / "trace.log"
    script = (
        "import os, socket, sys\n"
        f"sys.path.insert(0, {str(REPO / 'tooling')!r})\n"
        "from horon_bundle.load.child.loading import marker\n"
        "marker('load-begin')\n"
        "os.stat('.')\n"
        "open('made', 'w').close()\n"
        "os.rename('made', 'moved')\n"
        "os.mkdir('dir')\n"
        "os.symlink('moved', 'link')\n"
        "os.chmod('moved', 0o600)\n"
        "os.truncate('moved', 0)\n"
        "os.unlink('link')\n"
        "os.rmdir('dir')\n"
        "s = socket.socket()\n"
        "try: s.connect(('127.0.0.1', 9))\n"
        "except OSError: pass\n"
    )
    subprocess.run([*tracer.argv(log), sys.executable, "-I", "-c", script], cwd=tmp_path,
                   check=True, env={"PATH": os.environ["PATH"]})
    markers: list[str] = []
    with log.open() as lines:
        found = offences(parse_calls(lines, markers), cwd=str(tmp_path))
    assert markers == ["load"]
    targets = {Path(o.target).name for o in found if o.kind == "write"}
    assert {"made", "moved", "dir", "link"} <= targets
    assert {o.syscall.removesuffix("at") for o in found} >= {
        "open", "rename", "mkdir", "symlink", "chmod", "truncate", "unlink", "rmdir", "connect"}
    assert [o.target for o in found if o.kind == "network"] == ["127.0.0.1:9"]
    text = log.read_text()
    assert "stat(" not in text  # the start-up's (and the script's) stats were not stopped for


@pytest.mark.process
@pytest.mark.skipif(not HAS_STRACE, reason="needs strace")
def test_an_strace_without_the_filter_options_traces_every_file_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An strace that refuses `--seccomp-bpf` (older than 5.3) still traces: every file and
    network call, as before."""
    real = shutil.which("strace")
    wrapper = tmp_path / "strace"
    wrapper.write_text("#!/bin/sh\n"
                       'for a in "$@"; do [ "$a" = --seccomp-bpf ] && '
                       "{ echo \"strace: unrecognized option '--seccomp-bpf'\" >&2; exit 1; }; "
                       "done\n"
                       f'exec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    tracer = probe_tracer(TRACED)
    assert tracer.strace == str(wrapper)
    assert not tracer.seccomp
    assert tracer.syscalls == ()
    assert "trace=%file,%network" in tracer.options()
    log = tmp_path / "trace.log"
    script = (f"import sys; sys.path.insert(0, {str(REPO / 'tooling')!r})\n"
              "from horon_bundle.load.child.loading import marker\n"
              "marker('load-begin')\n"
              "open('made', 'w').close()\n")
    subprocess.run([*tracer.argv(log), sys.executable, "-I", "-c", script], cwd=tmp_path,
                   check=True, env={"PATH": os.environ["PATH"]})
    markers: list[str] = []
    with log.open() as lines:
        found = offences(parse_calls(lines, markers), cwd=str(tmp_path))
    assert markers == ["load"]  # the readlink marker is a file call: traced here too
    assert [Path(o.target).name for o in found] == ["made"]
