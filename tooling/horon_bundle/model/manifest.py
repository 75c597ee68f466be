"""plugin.json (format horon.plugin.v1): the model, its strict decoder and its canonical form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes, identifiers, paths
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value, join
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model import qa

FORMAT = "horon.plugin.v1"
WIRE_SCHEMA = "horon.wire.v1"
ABI_MAJOR = 1
CHANNELS = ("release", "qa")
ASSET_ROLES = ("provenance", "sbom", "notices")
MANIFEST_NAME = "plugin.json"
CHECKSUMS_NAME = "SHA256SUMS"
RESERVED_PATHS = frozenset([MANIFEST_NAME, CHECKSUMS_NAME])
MAX_MANIFEST_BYTES = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class FileDigest:
    """A file inside the bundle with its SHA-256 and size."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class License:
    spdx: str
    file: FileDigest


@dataclass(frozen=True, slots=True, kw_only=True)
class Asset:
    role: str
    file: FileDigest


@dataclass(frozen=True, slots=True, kw_only=True)
class Sidecar:
    name: str
    file: FileDigest
    executable: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    id: str
    name: str
    version: str
    target: str
    profile: str
    channel: str
    abi_major: int
    abi_minor: int
    wire_schema: str
    features: tuple[str, ...]
    library: FileDigest
    license: License
    assets: tuple[Asset, ...]
    sidecars: tuple[Sidecar, ...]

    def asset(self, role: str) -> Asset | None:
        for asset in self.assets:
            if asset.role == role:
                return asset
        return None

    def declared_files(self) -> dict[str, FileDigest]:
        """Every file plugin.json declares, by path."""
        files = [self.library, self.license.file]
        files += [a.file for a in self.assets] + [s.file for s in self.sidecars]
        return {f.path: f for f in files}

    def to_json(self) -> dict[str, Any]:
        def digest(f: FileDigest) -> dict[str, Any]:
            return {"path": f.path, "sha256": f.sha256, "size": f.size}

        return {
            "format": FORMAT,
            "id": self.id, "name": self.name, "version": self.version,
            "target": self.target, "profile": self.profile, "channel": self.channel,
            "abi": {"major": self.abi_major, "minor": self.abi_minor},
            "wire_schema": self.wire_schema,
            "features": list(self.features),
            "library": digest(self.library),
            "license": {"spdx": self.license.spdx, **digest(self.license.file)},
            "assets": [{"role": a.role, **digest(a.file)} for a in self.assets],
            "sidecars": [{"name": s.name, **digest(s.file), "executable": s.executable}
                         for s in self.sidecars],
        }

    def to_bytes(self) -> bytes:
        return canonical_bytes(self.to_json())


def bundle_name(plugin_id: str, version: str, target: str, channel: str) -> str:
    """A bundle's default name, `<id>-<version>-<target>` (`-qa` for a qa bundle); it is never
    parsed back: plugin.json says what a bundle is."""
    base = f"{plugin_id}-{version}-{target}"
    return base if channel == "release" else f"{base}-qa"


def parse_manifest(data: bytes, *, source: str = MANIFEST_NAME) -> Manifest:
    """Strictly read plugin.json bytes; raises Refused listing every problem found."""
    document = read_json(data, source=source, max_bytes=MAX_MANIFEST_BYTES)
    findings = Findings()
    if not isinstance(document, dict):
        raise Refused.one(codes.MANIFEST_FORMAT,
                          f"{source}: the document is {describe_value(document)}, not an object")
    fmt = document.get("format")
    if fmt != FORMAT:
        raise Refused.one(codes.MANIFEST_FORMAT,
                          f"{source}: format is {describe_value(fmt)}, expected {FORMAT!r}")
    manifest = _Decoder(FieldReader(
        source, findings, codes.MANIFEST_UNKNOWN_FIELD, codes.MANIFEST_MISSING_FIELD,
        codes.MANIFEST_TYPE)).decode(dict(document))
    findings.raise_if_any()
    assert manifest is not None  # the decoder returns None only with findings
    return manifest


class _Decoder:
    def __init__(self, reader: FieldReader) -> None:
        self.r = reader

    def value(self, where: str, message: str) -> None:
        self.r.report(codes.MANIFEST_VALUE, where, message)

    def decode(self, doc: dict[str, Any]) -> Manifest | None:
        r = self.r
        doc.pop("format")
        plugin_id = r.take(doc, "id", str, "")
        name = r.take(doc, "name", str, "")
        version = r.take(doc, "version", str, "")
        target = r.take(doc, "target", str, "")
        profile = r.take(doc, "profile", str, "")
        channel = r.take(doc, "channel", str, "")
        abi = r.take(doc, "abi", dict, "")
        wire_schema = r.take(doc, "wire_schema", str, "")
        features = r.strings(r.take(doc, "features", list, ""), "features")
        library = self.file(r.take(doc, "library", dict, ""), "library")
        license_ = self.license(r.take(doc, "license", dict, ""))
        assets = self.items(r.take(doc, "assets", list, ""), "assets", self.asset)
        sidecars = self.items(r.take(doc, "sidecars", list, ""), "sidecars", self.sidecar)
        r.finish(doc, "")
        abi_major, abi_minor = self.abi(abi)

        if plugin_id is not None and not identifiers.PLUGIN_ID.fullmatch(plugin_id):
            self.value("id", f"{describe_value(plugin_id)} does not match [a-z][a-z0-9-]{{1,62}}")
        if name is not None and (problem := identifiers.display_name_problem(name)):
            self.value("name", f"{describe_value(name)}: {problem}")
        if version is not None and not identifiers.SEMVER.fullmatch(version):
            self.value("version", f"{describe_value(version)} is not a semantic version")
        if target is not None and (problem := identifiers.target_problem(target)):
            r.report(codes.MANIFEST_TARGET, "target", problem)
        if profile is not None and not identifiers.PROFILE.fullmatch(profile):
            self.value("profile", f"{describe_value(profile)} is not a cargo profile name")
        if channel is not None and channel not in CHANNELS:
            self.value("channel", f"{describe_value(channel)} is not 'release' or 'qa'")
        if wire_schema is not None and wire_schema != WIRE_SCHEMA:
            self.value("wire_schema", f"{describe_value(wire_schema)}, expected {WIRE_SCHEMA!r}")
        if features is not None:
            self.features(features, channel)
        if library is not None and target is not None:
            self.library(library, target)
        if assets is not None:
            self.check_assets(assets)
        if sidecars is not None:
            for index, sidecar in enumerate(sidecars):
                if not sidecar.file.path.startswith("sidecars/"):
                    r.report(codes.MANIFEST_PATH_PLACE, f"sidecars[{index}].path",
                             f"{sidecar.file.path!r} is not under sidecars/")
        if license_ is not None and "/" in license_.file.path:
            r.report(codes.MANIFEST_PATH_PLACE, "license.path",
                     f"{license_.file.path!r} is not at the top level of the bundle")
        if None in (library, license_, assets, sidecars):
            return None
        assert library is not None and license_ is not None
        assert assets is not None and sidecars is not None
        self.check_paths(library, license_, assets, sidecars)
        if r.findings:
            return None
        assert plugin_id is not None and name is not None and version is not None
        assert target is not None and profile is not None and channel is not None
        assert wire_schema is not None and features is not None
        assert abi_major is not None and abi_minor is not None
        return Manifest(
            id=plugin_id, name=name, version=version, target=target, profile=profile,
            channel=channel, abi_major=abi_major, abi_minor=abi_minor, wire_schema=wire_schema,
            features=tuple(features), library=library, license=license_,
            assets=tuple(assets), sidecars=tuple(sidecars))

    def abi(self, abi: dict[str, Any] | None) -> tuple[int | None, int | None]:
        if abi is None:
            return None, None
        major = self.r.take(abi, "major", int, "abi")
        minor = self.r.take(abi, "minor", int, "abi")
        self.r.finish(abi, "abi")
        if major is not None and major != ABI_MAJOR:
            self.value("abi.major", f"{major}, a horon.plugin.v1 bundle has ABI major {ABI_MAJOR}")
        if minor is not None and minor > 0xFFFF:
            self.value("abi.minor", f"{minor} does not fit 16 bits")
        return major, minor

    def features(self, features: list[str], channel: str | None) -> None:
        for index, feature in enumerate(features):
            if not identifiers.FEATURE.fullmatch(feature):
                self.value(f"features[{index}]", f"{feature!r} is not a feature token")
        if features != sorted(set(features)):
            self.r.report(codes.MANIFEST_FEATURES_ORDER, "features",
                          f"{features} is not sorted by byte order and unique")
        if channel == "release":
            for feature in features:
                pattern = qa.matching_pattern(feature, qa.DEFAULT_QA_PATTERNS)
                if pattern is not None:
                    self.r.report(codes.MANIFEST_QA_FEATURE, "features",
                                  f"release bundle lists {feature!r}, matching QA pattern "
                                  f"{pattern!r}")

    def library(self, library: FileDigest, target: str) -> None:
        os_name = identifiers.target_os(target)
        parts = library.path.split("/")
        if len(parts) != 2 or parts[0] != "lib":
            self.r.report(codes.MANIFEST_PATH_PLACE, "library.path",
                          f"{library.path!r} is not a file directly under lib/")
        elif os_name is not None:
            expected = identifiers.LIBRARY_EXTENSIONS[os_name]
            if not library.path.endswith(expected):
                self.r.report(codes.MANIFEST_LIBRARY_EXTENSION, "library.path",
                              f"{library.path!r} for target {target} must end with {expected}")

    def check_assets(self, assets: list[Asset]) -> None:
        roles = [a.role for a in assets]
        if roles.count("provenance") != 1:
            self.r.report(codes.MANIFEST_ASSETS, "assets",
                          f"{roles.count('provenance')} provenance assets, exactly one required")
        for role in ("sbom", "notices"):
            if roles.count(role) > 1:
                self.r.report(codes.MANIFEST_ASSETS, "assets", f"{role} declared more than once")
        for index, asset in enumerate(assets):
            if "/" in asset.file.path:
                self.r.report(codes.MANIFEST_PATH_PLACE, f"assets[{index}].path",
                              f"{asset.file.path!r} is not at the top level of the bundle")

    def check_paths(self, library: FileDigest, license_: License, assets: list[Asset],
                    sidecars: list[Sidecar]) -> None:
        declared = [("library.path", library.path), ("license.path", license_.file.path)]
        declared += [(f"assets[{i}].path", a.file.path) for i, a in enumerate(assets)]
        declared += [(f"sidecars[{i}].path", s.file.path) for i, s in enumerate(sidecars)]
        for where, path in declared:
            if path in RESERVED_PATHS:
                self.r.report(codes.MANIFEST_PATH_UNSAFE, where, f"{path!r} is reserved")
        for first, second in paths.collisions(p for _, p in declared):
            if first == second:
                self.r.report(codes.MANIFEST_PATH_COLLISION, "paths",
                              f"{first!r} is declared twice")
            else:
                self.r.report(codes.MANIFEST_PATH_COLLISION, "paths",
                              f"{first!r} and {second!r} collide")

    def items(self, values: list[Any] | None, where: str, decode: Any) -> list[Any] | None:
        if values is None:
            return None
        decoded = [decode(self.r.typed(item, dict, join(where, i)), join(where, i))
                   for i, item in enumerate(values)]
        return None if None in decoded else decoded

    def file(self, obj: dict[str, Any] | None, where: str, *, finish: bool = True,
             ) -> FileDigest | None:
        if obj is None:
            return None
        path = self.r.take(obj, "path", str, where)
        sha256 = self.r.take(obj, "sha256", str, where)
        size = self.r.take(obj, "size", int, where)
        if finish:
            self.r.finish(obj, where)
        if path is not None and (problem := paths.path_problem(path)):
            self.r.report(codes.MANIFEST_PATH_UNSAFE, join(where, "path"),
                          f"{describe_value(path)}: {problem}")
            path = None
        if sha256 is not None and not identifiers.SHA256_HEX.fullmatch(sha256):
            self.value(join(where, "sha256"), f"{describe_value(sha256)} is not 64 lowercase hex")
            sha256 = None
        if path is None or sha256 is None or size is None:
            return None
        return FileDigest(path=path, sha256=sha256, size=size)

    def license(self, obj: dict[str, Any] | None) -> License | None:
        if obj is None:
            return None
        spdx = self.r.take(obj, "spdx", str, "license")
        file = self.file(obj, "license")
        if spdx is not None and not identifiers.SPDX_EXPRESSION.fullmatch(spdx):
            self.value("license.spdx", f"{describe_value(spdx)} is not an SPDX expression")
            spdx = None
        if spdx is None or file is None:
            return None
        return License(spdx=spdx, file=file)

    def asset(self, obj: dict[str, Any] | None, where: str) -> Asset | None:
        if obj is None:
            return None
        role = self.r.take(obj, "role", str, where)
        file = self.file(obj, where)
        if role is not None and role not in ASSET_ROLES:
            self.value(join(where, "role"), f"{describe_value(role)} is not one of {ASSET_ROLES}")
            role = None
        if role is None or file is None:
            return None
        return Asset(role=role, file=file)

    def sidecar(self, obj: dict[str, Any] | None, where: str) -> Sidecar | None:
        if obj is None:
            return None
        name = self.r.take(obj, "name", str, where)
        executable = self.r.take(obj, "executable", bool, where)
        file = self.file(obj, where)
        if name is not None and not identifiers.PLUGIN_ID.fullmatch(name):
            self.value(join(where, "name"), f"{describe_value(name)} is not a sidecar name")
            name = None
        if name is None or executable is None or file is None:
            return None
        return Sidecar(name=name, file=file, executable=executable)
