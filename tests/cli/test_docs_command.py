"""`horon-bundle docs`: the topics on stdout (the user pages and `schemas`, never the pages
for working on horon-bundle itself), a page rendered by rich on a terminal and plain Markdown
anywhere else or under NO_COLOR, without the repository's test marks either way; every
`horon-bundle docs TOPIC` a shipped text names is a topic."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from horon_bundle.cli.cmd_docs import page_text
from horon_bundle.core.shipped import DEVELOPER_PAGES
from tests.helpers import REPO, cli

ESCAPE = "\x1b"


def _topics() -> list[str]:
    listed = cli("docs")
    assert listed.status == 0 and listed.stderr == ""
    return listed.stdout.split()


def test_the_topics_are_the_user_pages_and_schemas() -> None:
    topics = _topics()
    assert "schemas" in topics and "getting-started" in topics and "output" in topics
    assert not set(DEVELOPER_PAGES) & set(topics)
    pages = {p.stem for p in (REPO / "docs").glob("*.md")}
    assert set(topics) == (pages - set(DEVELOPER_PAGES)) | {"schemas"}


def test_off_a_terminal_a_page_is_its_markdown_without_test_marks() -> None:
    source = (REPO / "docs" / "getting-started.md").read_text()
    assert "<!-- doc-test:" in source
    shown = cli("docs", "getting-started")
    assert shown.status == 0 and shown.stderr == ""
    assert "<!--" not in shown.stdout and ESCAPE not in shown.stdout
    assert shown.stdout == page_text(source)
    assert "```sh" in shown.stdout  # the Markdown itself, for a pipe or a file


def test_on_a_terminal_rich_renders_it_and_no_color_takes_the_styles_away() -> None:
    rendered = cli("docs", "getting-started", env={"FORCE_COLOR": "1"})
    assert rendered.status == 0 and ESCAPE in rendered.stdout
    assert "<!--" not in rendered.stdout and "```" not in rendered.stdout
    plain = cli("docs", "getting-started", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert ESCAPE not in plain.stdout and "<!--" not in plain.stdout


def test_the_schemas_topic_lists_every_schema_and_where_they_are() -> None:
    shown = cli("docs", "schemas")
    assert shown.status == 0
    for schema in (REPO / "docs" / "schemas").glob("*.schema.json"):
        assert schema.name in shown.stdout
    # where the installed package's docs are: this checkout's, or a wheel's shipped copy
    where = re.search(r"The schema files are in `(.+)`\.\s*\Z", shown.stdout)
    assert where is not None, shown.stdout[-300:]
    listed = Path(where.group(1))
    assert {p.name for p in listed.glob("*.schema.json")} == \
        {p.name for p in (REPO / "docs" / "schemas").glob("*.schema.json")}


def test_an_unknown_topic_names_the_topics() -> None:
    refused = cli("docs", "development")
    assert refused.status == 2 and refused.codes == ["usage.invalid"]
    assert "Pages: abi-v1," in refused.stderr and "schemas" in refused.stderr


def test_every_topic_a_shipped_text_names_exists() -> None:
    listed = subprocess.run(["git", "ls-files", "tooling", "docs", "templates", "README.md"],
                            cwd=REPO, check=True, capture_output=True, text=True).stdout.split()
    named = set()
    for name in listed:
        if name.endswith((".py", ".md", ".toml")):
            named |= set(re.findall(r"horon-bundle docs ([a-z][a-z0-9-]*)",
                                    (REPO / name).read_text()))
    assert named - {"TOPIC"} <= set(_topics()), named - set(_topics())


@pytest.mark.parametrize("page", DEVELOPER_PAGES)
def test_the_wheel_leaves_the_developer_pages_out(page: str) -> None:
    setup = (REPO / "setup.py").read_text()
    assert f'"{page}.md"' in setup  # the wheel's copy of docs/ skips it (nox -s dist checks)
