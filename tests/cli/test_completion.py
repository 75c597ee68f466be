"""Shell completion and the manual page, both generated from the argument parser: the bash
script loads in a real bash, which then completes a command and an option; the committed
manual page (shipped in the wheel as share/man/man1/horon-bundle.1) is the parser's now."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from horon_bundle.cli.main import COMMANDS
from tests.helpers import REPO, cli
from tests.man_page import PAGE, render


def _complete(script: Path, *words: str) -> list[str]:
    """What bash offers for the last word of `horon-bundle WORDS…`, through the function
    `complete -p` names for the command (the real completion machinery: compgen)."""
    line = " ".join(["horon-bundle", *words])
    program = f"""
source {script}
spec=$(complete -p horon-bundle) || exit 9
function=$(printf '%s\\n' "$spec" | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=(horon-bundle {" ".join(repr(w) for w in words)})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
"$function" horon-bundle "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_loads_the_script_and_completes_a_command_and_an_option(tmp_path: Path) -> None:
    printed = cli("completion", "bash")
    assert printed.status == 0 and printed.stderr == ""
    script = tmp_path / "horon-bundle.bash"
    script.write_text(printed.stdout)
    assert _complete(script, "ver") == ["verify"]
    assert set(_complete(script, "")) >= set(COMMANDS)
    assert _complete(script, "doctor", "--installed-v") == ["--installed-version"]
    assert "--probe-timeout" in _complete(script, "build", "--pro")


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_zsh_and_tcsh_scripts_name_every_command(shell: str) -> None:
    printed = cli("completion", shell)
    assert printed.status == 0
    for command in COMMANDS:
        assert command in printed.stdout, (shell, command)


def test_an_unknown_shell_is_a_usage_error() -> None:
    refused = cli("completion", "fish")
    assert refused.status == 2 and refused.codes == ["usage.invalid"]


def test_the_manual_page_is_the_parsers() -> None:
    assert PAGE.read_text() == render(), "run: python -m tests.man_page"
    text = PAGE.read_text()
    assert text.startswith('.TH HORON\\-BUNDLE "1"')
    for command in COMMANDS:
        assert "horon\\-bundle " + command in text, command


def test_the_wheel_ships_the_manual_page() -> None:
    """setup.py installs it under share/man/man1, where man finds it beside the command
    (`nox -s dist` checks the built wheel and the installed copy)."""
    setup = (REPO / "setup.py").read_text()
    assert '("share/man/man1", ["docs/man/horon-bundle.1"])' in setup
