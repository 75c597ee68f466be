"""Where registry credentials may go besides the registry itself: the token service it
delegates its login to.

A registry answering `401` with `WWW-Authenticate: Bearer realm="…"` names where a token is
bought. At the registry's own origin (scheme, host, port) the credentials go with that
request, as Basic authentication. At another origin they go only when the realm is HTTPS —
its certificate verified for its host, no user information, nothing downgraded — and its
host is one the registry is known to delegate to: a built-in pair (`KNOWN_TOKEN_HOSTS`:
Docker Hub's auth.docker.io, GitLab.com's gitlab.com), or a host named for this destination
in the repository variable `HORON_REGISTRY_TOKEN_HOSTS` (exact host names separated by
commas: no wildcard, scheme, port or path; empty or unset, the table only). GHCR, Quay,
Amazon ECR, Google's gcr.io and Artifact Registry and Azure's ACR answer on their own origin
and need neither. Any other realm is asked anonymously, and when that is not enough the
refusal names the realm's host and the variable that would allow it. So a registry naming a
realm never chooses where the password goes: only this table and the user do.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Mapping
from types import MappingProxyType

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.publish.destinations.oci_origin import Origin, shown

TOKEN_HOSTS_VARIABLE = "HORON_REGISTRY_TOKEN_HOSTS"  # noqa: S105 - a variable's name
_DOCKER_HUB = frozenset({"auth.docker.io"})
KNOWN_TOKEN_HOSTS: Mapping[str, frozenset[str]] = MappingProxyType({
    "registry-1.docker.io": _DOCKER_HUB,  # Docker Hub's registry, as docker.io resolves to
    "index.docker.io": _DOCKER_HUB,
    "docker.io": _DOCKER_HUB,
    "registry.gitlab.com": frozenset({"gitlab.com"}),  # GitLab.com's /jwt/auth
})
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_ENTRIES = re.compile(r"[\s,]+")


def read_token_hosts(environ: Mapping[str, str]) -> frozenset[str]:
    """The hosts `HORON_REGISTRY_TOKEN_HOSTS` names (none when it is empty or unset); a value
    that is not a list of exact host names is refused, not read in part."""
    entries = [entry.lower() for entry in
               _ENTRIES.split(environ.get(TOKEN_HOSTS_VARIABLE, "")) if entry]
    for entry in entries:
        if not _HOST_NAME.fullmatch(entry) and not _is_address(entry):
            raise Refused.one(codes.PUBLISH_AUTH, f"{TOKEN_HOSTS_VARIABLE}: {shown(entry, 60)!r} "
                              "is not a host name; name each token service's host exactly, "
                              "separated by commas (no wildcard, scheme, port or path)")
    return frozenset(entries)


def realm_withheld(registry: Origin, realm: str, named: frozenset[str]) -> str | None:
    """Why the credentials must not go to the token realm `realm` (an absolute URL) of the
    registry at `registry`, or None when they may."""
    origin = Origin.of(realm)
    if "@" in urllib.parse.urlsplit(realm).netloc:  # the transport refuses it before, too
        return f"the realm {origin.text} holds user information"
    if origin == registry:
        return None
    if origin.scheme != "https":
        return (f"credentials go to a token service on another origin only over HTTPS, and "
                f"{origin.text} is not")
    if origin.host in KNOWN_TOKEN_HOSTS.get(registry.host, frozenset()) or origin.host in named:
        return None
    host = shown(origin.host, 80)
    return (f"credentials go to a token service on another host only when it is one the "
            f"registry is known to use or {TOKEN_HOSTS_VARIABLE} names it "
            f"({TOKEN_HOSTS_VARIABLE}={host} would allow {host})")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
