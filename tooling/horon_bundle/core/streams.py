"""`ByteStream`: what reads a file forward, whether it is a file on disk or an archive entry.

The one protocol for both sides of a stream: a bundle source hands these out
(`verify.reading.interface`), the static-section reader (`abi.section`), the install staging
and the reproducer's comparison read them.
"""

from __future__ import annotations

from typing import Protocol


class ByteStream(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...

    def close(self) -> None: ...
