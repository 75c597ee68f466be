"""Where a registry URL points (its origin: scheme, host, port), and how a message shows what a
registry or the environment said: escaped, short, never a path's query or a URL's user
information. Below the transport (`oci_http`), its proxies (`oci_proxy`) and the token realms
credentials may go to (`oci_realms`), which all compare origins.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

MAX_SHOWN_CHARS = 200  # of a registry's own text (an error, a host) in one message


@dataclass(frozen=True, slots=True, order=True)
class Origin:
    scheme: str
    host: str  # lower case; an IPv6 literal without brackets
    port: int

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urllib.parse.urlsplit(url)
        port = parts.port if parts.port is not None else 443 if parts.scheme == "https" else 80
        return cls(parts.scheme, (parts.hostname or "").lower(), port)

    @property
    def authority(self) -> str:
        """`host:port`, an IPv6 literal in brackets (what CONNECT and Host name)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def text(self) -> str:
        return shown(f"{self.scheme}://{self.authority}")


def shown(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """A registry's text for one line of a message: control and non-ASCII characters escaped,
    at most `limit` characters."""
    escaped = text.encode("ascii", "backslashreplace").decode("ascii")
    escaped = "".join(c if " " <= c <= "~" else f"\\x{ord(c):02x}" for c in escaped)
    return escaped if len(escaped) <= limit else escaped[:limit] + "…"


def path_of(url: str) -> str:
    """The path of a URL without its query (upload session state stays out of messages)."""
    return shown(urllib.parse.urlsplit(url).path or "/")


def where(url: str) -> str:
    """A URL as a message shows it: scheme, host and port (never its path or query)."""
    try:
        return Origin.of(url).text
    except ValueError:
        return "<unparsable>"
