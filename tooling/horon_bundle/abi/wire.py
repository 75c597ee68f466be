"""The wire form of ABI v1 feature lists: comma-separated tokens, no spaces, sorted."""

from __future__ import annotations


def parse_list(text: str) -> tuple[str, ...]:
    """A wire feature list (comma separated, no spaces); empty text is the empty list."""
    return tuple(text.split(",")) if text else ()
