"""Where bundles go: the one small interface every destination implements, and its address.

`HORON_PUBLISH_DESTINATION` is `file:///abs/dir` (a content-addressed directory store) or
`oci://host[:port]/namespace` (an OCI registry, one repository per plugin id). The address
never carries credentials: a value with user information, a query or a fragment is refused,
and only the host and path are ever shown.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
import urllib.parse
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.publish.gate import DESTINATION_VARIABLE
from horon_bundle.publish.release import BundleKey, ReleaseItem

# One path component of an OCI repository name (distribution's reference grammar).
OCI_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")

ABSENT, PRESENT, YANKED = "absent", "present", "yanked"
PUBLISHED, ALREADY_PUBLISHED = "published", "already-published"
YANK_FORMAT = "horon.yank.v1"  # the record of a withdrawal, in every destination


@dataclass(frozen=True, slots=True, kw_only=True)
class FileAddress:
    root: Path

    @property
    def display(self) -> str:
        return "file://" + self.root.as_posix()


@dataclass(frozen=True, slots=True, kw_only=True)
class OciAddress:
    host: str  # as written (a name, an IPv4 literal or a bracketed IPv6 literal)
    port: int | None
    namespace: str
    loopback: bool

    @property
    def registry(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"

    @property
    def display(self) -> str:
        return f"oci://{self.registry}/{self.namespace}"


Address = FileAddress | OciAddress


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteState:
    """What the destination holds for one id/version/target."""

    status: str  # ABSENT, PRESENT or YANKED
    archive_sha256: str | None = None
    location: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class YankResult:
    plugin_id: str
    version: str
    target: str
    archive_sha256: str
    location: str
    already: bool


class Destination(ABC):
    """A publish destination. Every method either returns or raises `Refused`."""

    address: Address

    @property
    def display(self) -> str:
        return self.address.display

    @abstractmethod
    def access_findings(self, items: list[ReleaseItem]) -> list[Finding]:
        """Reachable and writable for these items? (Nothing is left behind by the check.)"""

    @abstractmethod
    def naming_findings(self, item: ReleaseItem) -> list[Finding]:
        """Can the destination name this id/version/target at all?"""

    @abstractmethod
    def state(self, plugin_id: str, version: str, target: str) -> RemoteState:
        """What is published under id/version/target (read only)."""

    @abstractmethod
    def harness_state(self, name: str, version: str) -> RemoteState:
        """What is published under a harness bundle's name/version (read only)."""

    def state_of(self, key: BundleKey) -> RemoteState:
        if key.kind == BundleKind.NATIVE:
            assert key.target is not None
            return self.state(key.name, key.version, key.target)
        return self.harness_state(key.name, key.version)

    @abstractmethod
    def location(self, item: ReleaseItem) -> str:
        """Where the item is (or would be) published, for plans and receipts."""

    @abstractmethod
    def upload(self, item: ReleaseItem) -> dict[str, str]:
        """Phase 1: store the item's files, invisible until committed; idempotent.

        Returns extra receipt facts (e.g. the manifest digest)."""

    @abstractmethod
    def commit(self, item: ReleaseItem) -> str:
        """Phase 2: make the item visible under its id/version/target.

        Returns PUBLISHED, or ALREADY_PUBLISHED when the same bytes won a race; raises
        `publish.conflict` when different bytes hold the name."""

    @abstractmethod
    def targets_of(self, plugin_id: str, version: str) -> list[str]:
        """Targets published for id/version (for `yank` without --target)."""

    @abstractmethod
    def yank(self, plugin_id: str, version: str, target: str, reason: str) -> YankResult:
        """Mark id/version/target withdrawn without touching its bytes."""

    def refresh_listing(self, items: list[ReleaseItem]) -> dict[str, Any] | None:
        """After every item of a run is committed (or a yank): rewrite what the destination
        derives from its entries (a `file://` store's Claude Code marketplace, when it has a
        public URL) and say what was written, for the receipt; None when there is nothing."""
        del items
        return None

    def log_publications(self, items: list[ReleaseItem],
                         yanks: list[YankResult]) -> dict[str, Any] | None:
        """After the entries are committed (or yanks written): append them to the
        destination's transparency log and say what it became (`status` appended, unchanged
        or not-kept), for the receipt; None when the destination keeps no log."""
        del items, yanks
        return None

    uploads_ahead = False  # whether `upload_ahead` does anything here

    def upload_ahead(self, archive: Path, key: BundleKey, size: int) -> None:
        """Called by preflight (not a dry run) as it starts on an archive, with what its
        plugin.json says (a hint, not yet verified): a destination may start sending the
        bytes, provided nothing is stored or visible unless `upload` is called for the
        verified item (`oci_ahead`). By default nothing."""
        del archive, key, size

    def begin_writing(self) -> None:  # noqa: B027 - only stores with temp files need it
        """Called once before the first upload of a run that is not a dry run (a `file://`
        store claims its `.tmp/` and removes what killed runs left there)."""

    def close(self) -> None:  # noqa: B027 - destinations without resources need nothing
        pass


def _refuse(message: str) -> Refused:
    return Refused.one(codes.PUBLISH_DESTINATION, f"{DESTINATION_VARIABLE}: {message}")


def parse_address(value: str) -> Address:
    """Parse the variable's value; a refusal never echoes anything that could be a secret."""
    scheme, sep, _rest = value.partition("://")
    if not sep:
        raise _refuse("expected file:///abs/dir or oci://host[:port]/namespace")
    try:
        parts = urllib.parse.urlsplit(value)
    except ValueError:
        raise _refuse(f"a {scheme!r} address that cannot be parsed") from None
    if "@" in parts.netloc:
        raise _refuse("the address holds user information; credentials never belong in it "
                      "(use HORON_REGISTRY_USERNAME/PASSWORD or the Docker config)")
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise _refuse("the address holds a query or fragment")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in value):
        raise _refuse("the address holds whitespace or a control character")
    if parts.scheme == "file":
        return _file_address(parts)
    if parts.scheme == "oci":
        return _oci_address(parts)
    raise _refuse(f"unsupported scheme {scheme[:20]!r} (file or oci)")


def _file_address(parts: urllib.parse.SplitResult) -> FileAddress:
    if parts.netloc not in ("", "localhost"):
        raise _refuse(f"file:// with host {parts.netloc!r}: write file:///abs/dir")
    path = urllib.parse.unquote(parts.path, errors="strict")
    if sys.platform == "win32" and re.match(r"/[A-Za-z]:/", path):  # prefix match: file:///C:/
        path = path[1:]  # file:///C:/dir
    root = Path(path)
    if not path or not root.is_absolute():
        raise _refuse(f"file:// path {path!r} is not absolute")
    if any(part in (".", "..") for part in path.split("/")):
        raise _refuse(f"file:// path {path!r} has . or .. components")
    return FileAddress(root=root)


def _oci_address(parts: urllib.parse.SplitResult) -> OciAddress:
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise _refuse(f"oci://{parts.netloc}: the port is not a number in 1 … 65535") from None
    if not host:
        raise _refuse("oci:// without a host")
    if port == 0:
        raise _refuse(f"oci://{parts.netloc}: port 0")
    literal = _ip_literal(host)
    if literal is None and not _HOST.fullmatch(host):
        raise _refuse(f"oci:// host {host[:60]!r} is not a host name or IP address")
    written = f"[{host}]" if literal is not None and literal.version == 6 else host.lower()
    namespace = parts.path.strip("/")
    if not namespace or parts.path.endswith("/") or "//" in parts.path:
        raise _refuse(f"oci://{parts.netloc}: write oci://host[:port]/namespace "
                      "(a namespace, no trailing slash)")
    for component in namespace.split("/"):
        if not OCI_COMPONENT.fullmatch(component):
            raise _refuse(f"oci:// namespace component {component[:60]!r} is not a valid "
                          "repository name component ([a-z0-9] separated by . _ __ -)")
    return OciAddress(host=written, port=port, namespace=namespace,
                      loopback=is_loopback(host))


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1, and `localhost` when every address it resolves to is."""
    literal = _ip_literal(host)
    if literal is not None:
        return literal.is_loopback
    if host.lower() != "localhost":
        return False
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback
                               for info in infos)
