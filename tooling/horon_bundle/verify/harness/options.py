"""What the command line asks of a harness verify (`--host`, `--strict`, `--zip`): apart from
the harness report, so that a native verify, which passes these options on, never builds the
harness report's class (start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from horon_bundle.model.harness.profile import HostProfile


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessOptions:
    host: HostProfile | None = None  # --host: events it cannot fire are named
    strict: bool = False  # --strict: every warning is a refusal
    zip_path: str | None = None  # --zip: the zip a ref names, when not beside it
