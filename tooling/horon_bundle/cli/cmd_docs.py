"""`horon-bundle docs [TOPIC]`: the documentation shipped in the package, offline.

A page is Markdown. On a terminal (and without NO_COLOR) rich renders it — headings, tables,
code blocks; anywhere else (a pipe, a file, NO_COLOR) the Markdown itself is printed. Either
way the HTML comments that mark how the repository's tests run a block (`<!-- doc-test: … -->`,
`<!-- sample: … -->`) are taken out: they are for the tests, not the reader.
"""

from __future__ import annotations

import argparse
import re

from horon_bundle.cli import render
from horon_bundle.cli.parsing import usage_error
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.core.shipped import DOCS, SCHEMAS_TOPIC, doc_page, doc_pages, shipped

# a whole line holding one HTML comment (the repository's test marks, generated-table fences)
_COMMENT_LINE = re.compile(r"^[ \t]*<!--.*?-->[ \t]*\n", re.M | re.S)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print a page of horon-bundle's documentation on stdout (rendered on a terminal, "
        "Markdown anywhere else), or list the pages. Hints name pages this way: "
        "`horon-bundle docs declaration`; `horon-bundle docs schemas` lists the JSON Schemas "
        "of every document and where they are."
    )
    parser.add_argument("topic", nargs="?", metavar="TOPIC",
                        help="a page, e.g. getting-started, declaration, refusal-codes, schemas "
                             "(default: list the pages)")
    parser.set_defaults(run=run)


def page_text(text: str) -> str:
    """The page as a reader sees it: without the lines of HTML comments."""
    return _COMMENT_LINE.sub("", text)


def run(args: argparse.Namespace) -> int:
    root = shipped(DOCS)
    pages = doc_pages(root) if root is not None else []
    if args.topic is None:
        for page in pages:
            render.result("{}", page)
        return EXIT_OK
    if args.topic not in pages:
        usage_error(f"no documentation page {args.topic!r}", f"Pages: {', '.join(pages)}.")
    assert root is not None
    text = page_text(doc_page(root, args.topic).read_text(encoding="utf-8"))
    if args.topic == SCHEMAS_TOPIC:
        text += f"\nThe schema files are in `{root / SCHEMAS_TOPIC}`.\n"
    render.page(text)
    return EXIT_OK
