"""The SBOM beside a harness zip: every file it ships with its digest, the zip's own digest,
and the packages its MCP servers name, valid CycloneDX 1.6 with purls packageurl reads."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

from horon_bundle.model.harness.mcp import McpServer
from horon_bundle.model.harness.mcp_packages import declared_package
from tests.harness_support import ZIP_NAME, edit_json, write_plugin
from tests.helpers import cli


def test_harness_sbom_lists_what_the_zip_ships(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    edit_json(workspace / ".mcp.json", lambda d: d["mcpServers"].update({
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.1.14",
                                          "."]},
        "fetch": {"command": "uvx", "args": ["mcp_server.fetch==0.6.2"]}}))
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out, "--json")
    assert result.status == 0, result.stderr
    text = (out / ZIP_NAME.replace(".zip", ".cdx.json")).read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    sbom = json.loads(text)
    archive = out / ZIP_NAME
    root = sbom["metadata"]["component"]
    assert root["hashes"] == [{"alg": "SHA-256",
                               "content": hashlib.sha256(archive.read_bytes()).hexdigest()}]
    with zipfile.ZipFile(archive) as bundle:
        shipped = {name: hashlib.sha256(bundle.read(name)).hexdigest()
                   for name in bundle.namelist() if not name.endswith("/")}
    files = {c["name"]: c["hashes"][0]["content"] for c in sbom["components"]
             if c["type"] == "file"}
    assert files == shipped
    packages = {c["purl"]: {p["name"]: p["value"] for p in c["properties"]}["horon:mcp-server"]
                for c in sbom["components"] if "purl" in c}
    assert packages == {
        "pkg:npm/%40modelcontextprotocol/server-filesystem@2025.1.14": "fs",
        "pkg:pypi/mcp-server-fetch@0.6.2": "fetch"}
    for purl in packages:
        assert PackageURL.from_string(purl).to_string() == purl


@pytest.mark.parametrize(("command", "args", "purl"), [
    ("npx", ["left-pad"], "pkg:npm/left-pad"),
    ("/usr/bin/npx", ["--yes", "left-pad@1.3.0"], "pkg:npm/left-pad@1.3.0"),
    ("uv", ["tool", "run", "Some_Tool@2.0"], "pkg:pypi/some-tool@2.0"),
    ("pipx", ["run", "black==24.1.0"], "pkg:pypi/black@24.1.0"),
    ("npx", ["--package=x", "y"], None),  # an option we do not read: not guessed at
    ("sh", ["-c", "npx left-pad"], None),
    ("${CLAUDE_PLUGIN_ROOT}/servers/notes", [], None),
])
def test_declared_packages(command: str, args: list[str], purl: str | None) -> None:
    found = declared_package(McpServer(name="s", source=".mcp.json",
                                       fields={"command": command, "args": args}))
    assert (found.purl if found else None) == purl
