"""Progress as an observer: stages notify a reporter; only the CLI renders it."""

from __future__ import annotations

from typing import Protocol


class Reporter(Protocol):
    def step(self, text: str) -> None:
        """A new stage began (e.g. `building horon-example for x86_64-unknown-linux-gnu`)."""

    def detail(self, text: str) -> None:
        """A line of progress inside the current stage."""

    def note(self, text: str) -> None:
        """Something the user should read even when the run succeeds."""


class SilentReporter:
    def step(self, text: str) -> None:
        pass

    def detail(self, text: str) -> None:
        pass

    def note(self, text: str) -> None:
        pass
