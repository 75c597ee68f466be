"""Control characters out of everything the CLI prints (the one table, shared by the human
output, the JSON document, CI annotations and step summaries)."""

from __future__ import annotations

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, the bidirectional
# controls (text that reads differently from how it is stored) and the BOM.
UNSAFE = (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, 0x200E, 0x200F,
          *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF)
_SHOWN = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in UNSAFE}
# JSON escapes C0 itself; what it would leave raw
JSON_UNSAFE = {code: f"\\u{code:04x}" for code in UNSAFE if code >= 0x7F}


def plain(text: str) -> str:
    """`text` with every control character (a newline, an escape sequence, a Unicode line
    separator, a bidirectional override) shown as `\\xNN`/`\\uNNNN`, so it stays on its line
    and reads as stored."""
    return text.translate(_SHOWN)
