"""`horon-bundle docs [TOPIC]`: the documentation shipped in the package, offline."""

from __future__ import annotations

import argparse
import sys

from horon_bundle.cli import render
from horon_bundle.cli.parsing import usage_error
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.core.shipped import DOCS, shipped


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print a page of horon-bundle's documentation (Markdown) on stdout, or list the "
        "pages. Hints name pages this way: `horon-bundle docs declaration`."
    )
    parser.add_argument("topic", nargs="?", metavar="TOPIC",
                        help="a page, e.g. getting-started, declaration, refusal-codes")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    root = shipped(DOCS)
    pages = sorted(p.stem for p in root.glob("*.md")) if root is not None else []
    if args.topic is None:
        for page in pages:
            render.result("{}", page)
        return EXIT_OK
    if args.topic not in pages:
        usage_error(f"no documentation page {args.topic!r}", f"Pages: {', '.join(pages)}.")
    assert root is not None
    sys.stdout.write((root / f"{args.topic}.md").read_text(encoding="utf-8"))
    return EXIT_OK
