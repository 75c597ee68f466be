"""`nox -s mutants` judges mutants with in-process CLI runs (`tests.helpers.in_process`): they
must be what a user's run in a child process is, or a kill (or a survival) would mean nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import BuiltExample
from tests.helpers import cli, in_process


def test_in_process_run_is_the_child_process_run(example_release: BuiltExample,
                                                  tmp_path: Path) -> None:
    for args in (("verify", example_release.archive),
                 ("verify", tmp_path / "missing.zip"),
                 ("verify", "--no-such-option"),
                 ("codes",)):
        child, here = cli(*args), in_process(*args)
        assert (here.status, here.stdout, here.stderr) == (
            child.status, child.stdout, child.stderr), args
    assert in_process("verify", tmp_path / "missing.zip").status == 1
    assert in_process("verify", "--no-such-option").status == 2


def test_in_process_run_restores_environment_and_directory(tmp_path: Path) -> None:
    before_env, before_cwd = dict(os.environ), Path.cwd()
    result = in_process("codes", cwd=tmp_path, env={"HORON_TEST_MARKER": "1"})
    assert result.status == 0 and "yank.reason" in result.stderr
    assert dict(os.environ) == before_env and Path.cwd() == before_cwd
