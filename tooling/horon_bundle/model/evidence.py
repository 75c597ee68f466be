"""Evidence models: the recorded cargo invocation and the library's advertised ABI metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core.errors import Code
from horon_bundle.core.fields import FieldReader

EVIDENCE_INVOCATION = "invocation"
EVIDENCE_RECORD = "artifact-record"
EVIDENCE_KINDS = (EVIDENCE_INVOCATION, EVIDENCE_RECORD)
# where verify took a library's advertised metadata from: recomputed from its .horon_abi
# section, or only the metadata the build recorded
ADVERTISED_FROM_SECTION = "section"
ADVERTISED_RECORDED_ONLY = "recorded-only"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedArtifact:
    path: str
    sha256: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": self.size}


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """Evidence kind 1: the declared cargo command, as the toolchain ran it."""

    argv: tuple[str, ...]
    env: dict[str, str]
    toolchain: dict[str, str]
    exit_status: int
    artifacts: tuple[RecordedArtifact, ...]
    source_revision: str | None
    source_dirty: bool | None
    cargo_lock_sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv), "cwd": "$WORKSPACE", "env": dict(self.env),
            "toolchain": dict(self.toolchain), "exit_status": self.exit_status,
            "artifacts": [a.to_json() for a in self.artifacts],
            "source": {"revision": self.source_revision, "dirty": self.source_dirty},
            "cargo_lock_sha256": self.cargo_lock_sha256,
        }

    @classmethod
    def from_json(cls, value: object, reader: FieldReader, where: str) -> Invocation | None:
        obj = reader.typed(value, dict, where)
        if obj is None:
            return None
        obj = dict(obj)
        before = len(reader.findings)
        argv = reader.strings(reader.take(obj, "argv", list, where), f"{where}.argv")
        cwd = reader.take(obj, "cwd", str, where)
        env = reader.take(obj, "env", dict, where) or {}
        toolchain = reader.take(obj, "toolchain", dict, where) or {}
        exit_status = reader.take(obj, "exit_status", int, where)
        raw_artifacts = reader.take(obj, "artifacts", list, where) or []
        source = dict(reader.take(obj, "source", dict, where) or {})
        lock = reader.take(obj, "cargo_lock_sha256", str, where)
        reader.finish(obj, where)
        revision = source.pop("revision", None)
        dirty = source.pop("dirty", None)
        reader.finish(source, f"{where}.source")
        artifacts = []
        for index, raw in enumerate(raw_artifacts):
            art = reader.typed(raw, dict, f"{where}.artifacts[{index}]")
            if art is None:
                continue
            art = dict(art)
            path = reader.take(art, "path", str, f"{where}.artifacts[{index}]")
            sha = reader.take(art, "sha256", str, f"{where}.artifacts[{index}]")
            size = reader.take(art, "size", int, f"{where}.artifacts[{index}]")
            reader.finish(art, f"{where}.artifacts[{index}]")
            if path is not None and sha is not None and size is not None:
                artifacts.append(RecordedArtifact(path=path, sha256=sha, size=size))
        strings_ok = all(isinstance(v, str) for v in [*env.values(), *toolchain.values()])
        if not strings_ok:
            reader.report(reader.wrong_type, where, "env and toolchain values must be strings")
        if cwd is not None and cwd != "$WORKSPACE":
            reader.report(reader.wrong_type, f"{where}.cwd", f"{cwd!r}, expected '$WORKSPACE'")
        if exit_status is not None and exit_status != 0:
            reader.report(reader.wrong_type, f"{where}.exit_status",
                          f"cargo exited {exit_status}; a bundle needs a successful build")
        if len(reader.findings) != before or argv is None or exit_status is None or lock is None:
            return None
        return cls(argv=tuple(argv), env=env, toolchain=toolchain, exit_status=exit_status,
                   artifacts=tuple(artifacts),
                   source_revision=revision if isinstance(revision, str) else None,
                   source_dirty=dirty if isinstance(dirty, bool) else None,
                   cargo_lock_sha256=lock)


@dataclass(frozen=True, slots=True, kw_only=True)
class Advertised:
    """What the library says about itself: handshake table and/or static section."""

    abi_major: int
    abi_minor: int
    wire_schema: str
    features: tuple[str, ...]
    plugin_id: str
    observed_by: tuple[str, ...]  # "probe" (child-process handshake), "static-section"

    def to_json(self) -> dict[str, Any]:
        return {"abi_major": self.abi_major, "abi_minor": self.abi_minor,
                "wire_schema": self.wire_schema, "features": list(self.features),
                "plugin_id": self.plugin_id, "observed_by": list(self.observed_by)}

    def summary(self) -> str:
        """The advertised metadata in one line, for refusal messages."""
        return (f"plugin_id={self.plugin_id!r} abi={self.abi_major}.{self.abi_minor} "
                f"wire_schema={self.wire_schema!r} features={list(self.features)}")

    def same_metadata(self, other: Advertised) -> bool:
        return (self.abi_major, self.abi_minor, self.wire_schema, self.features,
                self.plugin_id) == (other.abi_major, other.abi_minor, other.wire_schema,
                                    other.features, other.plugin_id)

    @classmethod
    def from_json(cls, value: object, reader: FieldReader, where: str,
                  value_code: Code) -> Advertised | None:
        obj = reader.typed(value, dict, where)
        if obj is None:
            return None
        obj = dict(obj)
        before = len(reader.findings)
        major = reader.take(obj, "abi_major", int, where)
        minor = reader.take(obj, "abi_minor", int, where)
        wire = reader.take(obj, "wire_schema", str, where)
        features = reader.strings(reader.take(obj, "features", list, where), f"{where}.features")
        plugin_id = reader.take(obj, "plugin_id", str, where)
        observed = reader.strings(reader.take(obj, "observed_by", list, where),
                                  f"{where}.observed_by")
        reader.finish(obj, where)
        if observed is not None and not set(observed) <= {"probe", "static-section"}:
            reader.report(value_code, f"{where}.observed_by", f"{observed} unknown")
        if len(reader.findings) != before:
            return None
        assert major is not None and minor is not None and wire is not None
        assert features is not None and plugin_id is not None and observed is not None
        return cls(abi_major=major, abi_minor=minor, wire_schema=wire, features=tuple(features),
                   plugin_id=plugin_id, observed_by=tuple(observed))
