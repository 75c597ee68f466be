"""Opening the destination an address names (each implementation imported only when used)."""

from __future__ import annotations

from collections.abc import Mapping

from horon_bundle.core.reporter import Reporter
from horon_bundle.publish.destinations.interface import Address, Destination, FileAddress


def open_destination(address: Address, environ: Mapping[str, str],
                     reporter: Reporter | None = None) -> Destination:
    """The destination for a parsed address (the OCI client is imported only when needed);
    `environ` supplies registry credentials and the Docker config location; `reporter` hears
    of a registry request retried."""
    if isinstance(address, FileAddress):
        from horon_bundle.publish.destinations.file_store import FileStore  # noqa: PLC0415 - one seam
        return FileStore(address)
    from horon_bundle.publish.destinations.oci_registry import OciRegistry  # noqa: PLC0415 - heavy: oras
    return OciRegistry(address, environ, reporter)
