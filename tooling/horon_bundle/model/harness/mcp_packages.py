"""The package an MCP server's command names, when it names one a package manager fetches.

A local (stdio) server launched as `npx [-y|--yes] PACKAGE[@VERSION] …` runs an npm package,
`uvx PACKAGE[==VERSION] …` (or `uv tool run`, `pipx run`) a PyPI one: what the plugin ships is
then, in effect, that package too. Only those plain shapes are read — a command behind a shell,
a script or an option we do not know is not guessed at (docs/harness.md, "SBOM").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from horon_bundle.model.harness.mcp import McpServer

_NPM_NAME = re.compile(r"(?P<name>(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)"
                       r"(?:@(?P<version>[0-9A-Za-z.+_-]+))?")
_PYPI_NAME = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
                        r"(?:(?:==|@)(?P<version>[0-9A-Za-z.+!_-]+))?")
_NPX_FLAGS = frozenset({"-y", "--yes", "-q", "--quiet"})


@dataclass(frozen=True, slots=True, kw_only=True)
class DeclaredPackage:
    server: str
    ecosystem: str  # npm or pypi
    name: str
    version: str | None
    purl: str


def declared_package(server: McpServer) -> DeclaredPackage | None:
    command = server.fields.get("command")
    if not isinstance(command, str):
        return None
    args = list(server.args())
    tool = command.rsplit("/", 1)[-1]
    if tool == "npx":
        while args and args[0] in _NPX_FLAGS:
            args.pop(0)
        return _package(server.name, "npm", _NPM_NAME, args[0] if args else None)
    if tool == "uv" and args[:2] == ["tool", "run"]:
        args, tool = args[2:], "uvx"
    if tool == "pipx" and args[:1] == ["run"]:
        args, tool = args[1:], "uvx"
    if tool == "uvx":
        return _package(server.name, "pypi", _PYPI_NAME, args[0] if args else None)
    return None


def _package(server: str, ecosystem: str, grammar: re.Pattern[str],
             spec: str | None) -> DeclaredPackage | None:
    match = grammar.fullmatch(spec) if spec is not None else None
    if match is None:
        return None
    name, version = match["name"], match["version"]
    if ecosystem == "pypi":
        name = re.sub(r"[-_.]+", "-", name).lower()  # the purl spec's PyPI normalisation
    namespace, _, short = name.rpartition("/")
    path = (f"{quote(namespace, safe='')}/" if namespace else "") + quote(short, safe="")
    purl = f"pkg:{ecosystem}/{path}" + (f"@{quote(version, safe='')}" if version else "")
    return DeclaredPackage(server=server, ecosystem=ecosystem, name=name, version=version,
                           purl=purl)
