"""`HORON_PUBLISH_PUBLIC_URL`: the HTTPS address a `file://` store is served from.

When it is set, publishing harness zips to a `file://` store also writes
`.claude-plugin/marketplace.json` at the store's root, a Claude Code marketplace whose every
plugin is an `archive` source under this address (docs/publishing.md). Unset or empty: nothing
changes. It is read only when the gate is open, and refused (`publish.public-url`, exit 3)
before anything is read when it is not an address Claude Code downloads an archive from:
another scheme than https, user information, a query or fragment, whitespace, no host, or a
host the host refuses (localhost, a loopback, link-local or unspecified address, a cloud
metadata name).
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

PUBLIC_URL_VARIABLE = "HORON_PUBLISH_PUBLIC_URL"
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")
_PATH = re.compile(r"(?:/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})+)*/?")
# names Claude Code 2.1.332 refuses to download an archive from, besides localhost
_METADATA_HOSTS = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "ip6-localhost", "ip6-loopback", "localhost.localdomain",
    "localhost4", "localhost4.localdomain4", "localhost6", "localhost6.localdomain6"})
_METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "100.100.100.200", "168.63.129.16", "192.0.0.192", "fd00:ec2::254", "fd00:ec2::23",
    "fd20:ce::254", "fd00:c1::a9fe:a9fe", "fd00:a9fe:a9fe::1"))


@dataclass(frozen=True, slots=True, kw_only=True)
class PublicUrl:
    """The base every published file's URL starts with (no trailing slash), and its host."""

    base: str
    host: str

    def of(self, relative: str) -> str:
        """The URL of the store file at `relative` (a POSIX path inside the store)."""
        return f"{self.base}/{relative}"


def _refuse(message: str) -> Refused:
    return Refused.one(codes.PUBLISH_PUBLIC_URL, f"{PUBLIC_URL_VARIABLE}: {message}")


def read_public_url(environ: Mapping[str, str]) -> PublicUrl | None:
    """The parsed variable; None when it is unset or empty (GitHub's undefined `vars.X`)."""
    value = environ.get(PUBLIC_URL_VARIABLE, "")
    return parse_public_url(value) if value else None


def parse_public_url(value: str) -> PublicUrl:
    if any(ord(c) < 0x21 or ord(c) >= 0x7F for c in value):
        raise _refuse("the address holds whitespace, a control or a non-ASCII character "
                      "(percent-encode it)")
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError:
        raise _refuse("an address that cannot be parsed (or a port outside 1 … 65535)") from None
    if "@" in parts.netloc:
        raise _refuse("the address holds user information; a public address never carries "
                      "credentials")
    if parts.scheme.lower() != "https":
        raise _refuse(f"scheme {parts.scheme[:20]!r}: Claude Code downloads archives over "
                      "https only (write https://host[:port][/path])")
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise _refuse("the address holds a query or fragment")
    host = parts.hostname or ""
    if not host or port == 0:
        raise _refuse(f"{value[:100]}: no host (or port 0)")
    problem = _host_problem(host)
    if problem:
        raise _refuse(f"host {host[:80]!r}: {problem}")
    if not _PATH.fullmatch(parts.path):
        raise _refuse(f"path {parts.path[:80]!r}: expected /segments of URL characters, "
                      "without empty segments")
    netloc = parts.netloc.lower()
    return PublicUrl(base=f"https://{netloc}{parts.path.rstrip('/')}", host=host.rstrip("."))


def _host_problem(host: str) -> str | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        if address.is_loopback or address.is_link_local or address.is_unspecified \
                or address in _METADATA_ADDRESSES:
            return ("a loopback, link-local, unspecified or cloud metadata address, which "
                    "Claude Code refuses to download from")
        return None
    name = host.lower().rstrip(".")
    if not _HOST.fullmatch(host):
        return "not a host name"
    if name == "localhost" or name.endswith(".localhost") or name in _METADATA_HOSTS:
        return "a local or cloud metadata name, which Claude Code refuses to download from"
    return None
