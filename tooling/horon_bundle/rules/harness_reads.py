"""What lint learns from one text: the record every reader of hook lint fills (the shell
reader, the Python reader, the pattern reader of other languages)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Reads:
    """What a text reads from the environment and says, as far as lint can tell."""

    names: set[str] = field(default_factory=set)  # variables read by name (printenv NAME)
    dumps: set[str] = field(default_factory=set)  # how the whole environment is read
    computed: set[str] = field(default_factory=set)  # reads whose name is made at run time
    code: list[tuple[str, str]] = field(default_factory=list)  # (language, code) run inline
    strings: list[str] = field(default_factory=list)  # words unquoted, heredocs, literals
    unread: set[str] = field(default_factory=set)  # why some of it was read by patterns only
    answers: set[str] = field(default_factory=set)  # permissionDecision values set (Python)
    answer_computed: bool = False  # a permissionDecision value made at run time (Python)
    assigned: dict[str, set[str | None]] = field(default_factory=dict)  # shell NAME=value
    # (None: a value made at run time), so `"$d"` in an answer is followed to its values
