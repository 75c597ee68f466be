"""`<name>-<version>.cdx.json` beside a harness zip: a CycloneDX 1.6 SBOM of what it ships.

`metadata.component` is the plugin (type application) with the zip's SHA-256; one `file`
component per file of the zip with its SHA-256; and one component per package an MCP server's
command names (`npx pkg@1.2.3` → `pkg:npm/pkg@1.2.3`, `uvx pkg==1.2` → `pkg:pypi/pkg@1.2`,
property `horon:mcp-server`), which the host fetches when it starts the server. Written beside
the zip, not in it: the zip's own digest is in it, and a zip cannot hold its own digest.
Deterministic like the native SBOM (timestamp = the build's epoch, serial from the content).
"""

from __future__ import annotations

import datetime
import hashlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from horon_bundle.assets.sbom_subject import SERIAL_NAMESPACE
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.model.harness.mcp_packages import DeclaredPackage

SBOM_SUFFIX = ".cdx.json"


def harness_sbom(*, name: str, version: str, zip_sha256: str, files: Mapping[str, str],
                 packages: Sequence[DeclaredPackage], epoch: int, tool_version: str) -> bytes:
    """The SBOM's canonical bytes. Written as plain JSON, not with cyclonedx-python-lib: a
    harness zip may ship tens of thousands of files, and the library takes minutes for 12,000
    components where this takes milliseconds (the tests validate it with the library's own
    strict 1.6 validator)."""
    def sha(value: str) -> list[dict[str, str]]:
        return [{"alg": "SHA-256", "content": value}]

    root_ref = f"plugin:{name}@{version}"
    root = {"type": "application", "name": name, "version": version, "bom-ref": root_ref,
            "hashes": sha(zip_sha256),
            "properties": [{"name": "horon:bundle-kind", "value": "harness"}]}
    components: list[dict[str, Any]] = [
        {"type": "file", "name": path, "bom-ref": f"file:{path}", "hashes": sha(digest)}
        for path, digest in sorted(files.items())]
    unique = {(p.server, p.purl): p for p in packages}
    for (server, purl), package in sorted(unique.items()):
        component: dict[str, Any] = {
            "type": "application", "name": package.name, "bom-ref": f"mcp:{server}:{purl}",
            "purl": purl, "properties": [{"name": "horon:mcp-server", "value": server}]}
        if package.version is not None:
            component["version"] = package.version
        components.append(component)
    components.sort(key=lambda c: c["bom-ref"])
    refs = [c["bom-ref"] for c in components]
    timestamp = datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc)

    def render(serial: uuid.UUID) -> bytes:
        return canonical_bytes({
            "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
            "bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1,
            "serialNumber": serial.urn,
            "metadata": {"timestamp": timestamp.isoformat(), "component": root,
                         "tools": {"components": [{
                             "type": "application", "name": "horon-bundle",
                             "version": tool_version, "bom-ref": "tool:horon-bundle"}]}},
            "components": components,
            "dependencies": [*({"ref": ref} for ref in refs),
                             {"ref": root_ref, "dependsOn": refs}],
        })

    draft = render(uuid.UUID(int=0))
    return render(uuid.uuid5(SERIAL_NAMESPACE, hashlib.sha256(draft).hexdigest()))
