"""`python -m tests.man_page`: docs/man/horon-bundle.1 rewritten from the argument parser by
argparse-manpage (every command with its options, as `--help` shows them). The wheel ships it
as share/man/man1/horon-bundle.1 (setup.py); tests/cli/test_completion.py keeps the committed
page equal to what the parser gives now."""

from __future__ import annotations

import os

from argparse_manpage.manpage import Manpage  # type: ignore[import-untyped]

import horon_bundle
from horon_bundle.cli.main import parser
from tests.helpers import REPO

PAGE = REPO / "docs" / "man" / "horon-bundle.1"


def render() -> str:
    """The page; argparse wraps usage lines at the terminal's width, so it is fixed here."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        page = Manpage(parser(None))
        page.description = "build, check, sign, publish, install and audit plugin bundles"
        page.date = ""  # deterministic: the page changes with the parser, not with the day
        page.source = f"horon-bundle {horon_bundle.__version__}"
        page.manual = "horon-bundle manual"
        return str(page)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def main() -> int:
    PAGE.parent.mkdir(exist_ok=True)
    PAGE.write_text(render())
    print(f"{PAGE.relative_to(REPO)}: {len(PAGE.read_text().splitlines())} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
