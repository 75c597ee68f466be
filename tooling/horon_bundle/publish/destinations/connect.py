"""Opening the destination an address names (each implementation imported only when used)."""

from __future__ import annotations

from collections.abc import Mapping

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.reporter import Reporter
from horon_bundle.publish.destinations.interface import Address, Destination, FileAddress
from horon_bundle.publish.public_url import PUBLIC_URL_VARIABLE, read_public_url


def open_destination(address: Address, environ: Mapping[str, str],
                     reporter: Reporter | None = None) -> Destination:
    """The destination for a parsed address (the OCI client is imported only when needed);
    `environ` supplies registry credentials, the Docker config location and the address a
    `file://` store is served from (`HORON_PUBLISH_PUBLIC_URL`, refused for any other
    destination: a registry is not a marketplace); `reporter` hears of a registry request
    retried."""
    public_url = read_public_url(environ)
    if isinstance(address, FileAddress):
        from horon_bundle.publish.destinations.file_store import FileStore  # noqa: PLC0415 - one seam
        from horon_bundle.publish.destinations.store_log import read_log_key  # noqa: PLC0415
        return FileStore(address, public_url, read_log_key(environ))
    if public_url is not None:
        raise Refused.one(codes.PUBLISH_PUBLIC_URL,
                          f"{PUBLIC_URL_VARIABLE} is set, but {address.display} is not a "
                          "file:// store: only a store directory is served as a Claude Code "
                          "marketplace (unset the variable)")
    from horon_bundle.publish.destinations.oci_registry import OciRegistry  # noqa: PLC0415 - heavy: oras
    return OciRegistry(address, environ, reporter)
