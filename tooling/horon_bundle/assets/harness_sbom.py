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

from horon_bundle.assets.sbom_subject import SERIAL_NAMESPACE
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.harness.mcp_packages import DeclaredPackage

SBOM_SUFFIX = ".cdx.json"


def harness_sbom(*, name: str, version: str, zip_sha256: str, files: Mapping[str, str],
                 packages: Sequence[DeclaredPackage], epoch: int, tool_version: str) -> bytes:
    """The SBOM's canonical bytes; cyclonedx-python-lib is imported only here."""
    from cyclonedx.model import HashAlgorithm, HashType, Property  # noqa: PLC0415 - heavy
    from cyclonedx.model.bom import Bom, BomMetaData  # noqa: PLC0415
    from cyclonedx.model.component import Component, ComponentType  # noqa: PLC0415
    from cyclonedx.model.tool import ToolRepository  # noqa: PLC0415
    from cyclonedx.output.json import JsonV1Dot6  # noqa: PLC0415
    from packageurl import PackageURL  # noqa: PLC0415

    def sha(value: str) -> list[HashType]:
        return [HashType(alg=HashAlgorithm.SHA_256, content=value)]

    root = Component(type=ComponentType.APPLICATION, name=name, version=version,
                     bom_ref=f"plugin:{name}@{version}", hashes=sha(zip_sha256),
                     properties=[Property(name="horon:bundle-kind", value="harness")])
    components = [Component(type=ComponentType.FILE, name=path, bom_ref=f"file:{path}",
                            hashes=sha(digest)) for path, digest in sorted(files.items())]
    components += [Component(type=ComponentType.APPLICATION, name=p.name, version=p.version,
                             bom_ref=f"mcp:{p.server}:{p.purl}",
                             purl=PackageURL.from_string(p.purl),
                             properties=[Property(name="horon:mcp-server", value=p.server)])
                   for p in sorted({(p.server, p.purl): p for p in packages}.values(),
                                   key=lambda p: (p.server, p.purl))]
    tools = ToolRepository(components=[Component(
        type=ComponentType.APPLICATION, name="horon-bundle", version=tool_version,
        bom_ref="tool:horon-bundle")])
    timestamp = datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc)

    def render(serial: uuid.UUID) -> bytes:
        bom = Bom(serial_number=serial, metadata=BomMetaData(
            component=root, timestamp=timestamp, tools=tools))
        for component in components:
            bom.components.add(component)
        bom.register_dependency(root, components)
        text = JsonV1Dot6(bom).output_as_string()
        return canonical_bytes(read_json(text.encode("utf-8"), source="cyclonedx output",
                                         max_bytes=1 << 30, max_depth=64))

    draft = render(uuid.UUID(int=0))
    return render(uuid.uuid5(SERIAL_NAMESPACE, hashlib.sha256(draft).hexdigest()))
