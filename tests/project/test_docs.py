"""The docs stay true: every refusal code documented, README commands real."""

from __future__ import annotations

import re

from horon_bundle.cli.cmd_codes import markdown
from horon_bundle.core.errors import registered_codes
from tests.helpers import REPO, cli


def test_refusal_code_page_is_generated_from_the_registry() -> None:
    page = (REPO / "docs" / "refusal-codes.md").read_text()
    assert page == markdown(), "run: horon-bundle codes --markdown > docs/refusal-codes.md"


def test_every_code_is_a_stable_dotted_name() -> None:
    for code in registered_codes():
        assert re.fullmatch(r"[a-z]+(\.[a-z0-9]+(-[a-z0-9]+)*)+", code.name), code.name
        assert code.summary.endswith(".") and code.hint


def test_readme_first_screen_gives_the_two_commands() -> None:
    first_screen = "\n".join((REPO / "README.md").read_text().splitlines()[:25])
    assert "nox -s bundle" in first_screen
    assert "nox -s tests" in first_screen
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("nox -s tests")


def test_codes_command_lists_json() -> None:
    result = cli("codes", "--json")
    assert result.status == 0
    names = [c["code"] for c in result.json()["codes"]]
    assert names == sorted(names) and "manifest.unknown-field" in names
