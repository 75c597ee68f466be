"""The two kinds of bundle: native (a Rust cdylib with its provenance) and harness (a Claude
Code plugin as a zip), docs/harness.md.

A `BundleKind` is a `str`: JSON documents, dictionary keys and comparisons with the plain
names see `"native"` and `"harness"`, and it formats as its value in messages (on every
Python this tool supports), never as `BundleKind.NATIVE`.
"""

from __future__ import annotations

from enum import Enum


class BundleKind(str, Enum):
    NATIVE = "native"
    HARNESS = "harness"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return self.value.__format__(spec)


KIND_NAMES = tuple(kind.value for kind in BundleKind)  # the plain names, for `--kind`
