"""Release statements: `*.intoto.jsonl`, one in-toto v1 Statement per line naming archives.

`build` writes one beside the archives of each run (`horon-build-<12 hex>.intoto.jsonl`, the
hex from the digest of its subject list, so the jobs of a release never overwrite each other's
when their `dist/` directories are merged); `statement merge` joins those of one workflow run
into one release statement, which `sign` signs once (docs/release-statement.md).

Subjects are exactly the archives (file names in `dist/`, bound by SHA-256); the predicate is
SLSA provenance v1 of the run: the builder and invocation from the GitHub Actions workflow's
identity, the source repository and commit; outside it, the local builder. No host name,
no time: the same run over the same archives writes the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.fields import describe_value
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.identifiers import SHA256_HEX
from horon_bundle.core.paths import path_problem
from horon_bundle.core.strictjson import read_json

STATEMENT_SUFFIX = ".intoto.jsonl"
STATEMENT_PREFIX = "horon-build-"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
RELEASE_BUILD_TYPE = "https://horon.dev/horon-bundle/build-types/release/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
LOCAL_BUILDER = "urn:horon-bundle:builder:local"
MAX_STATEMENT_FILE_BYTES = 64 << 20
MAX_STATEMENT_LINES = 10_000
MAX_STATEMENT_SUBJECTS = 100_000
_MAX_LINE_DEPTH = 16
_TOP = frozenset({"_type", "subject", "predicateType", "predicate"})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunIdentity:
    """Who ran the build, from the environment: the workflow run in GitHub Actions, else local."""

    builder_id: str
    environment: str  # "github-actions" or "local"
    workflow: dict[str, str] | None = None  # ref, repository, path
    invocation_id: str | None = None
    source_uri: str | None = None
    source_commit: str | None = None
    source_dirty: bool | None = None


def run_identity(environ: Mapping[str, str], *, builder: str | None = None,
                 source_revision: str | None = None,
                 source_dirty: bool | None = None) -> RunIdentity:
    """The run as GitHub Actions names it (GITHUB_WORKFLOW_REF, GITHUB_RUN_ID,
    GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_SERVER_URL), else the local builder with the
    checkout's commit. `builder` (--builder-id) and HORON_BUILDER_ID name the builder."""
    explicit = builder or environ.get("HORON_BUILDER_ID") or None
    workflow_ref = environ.get("GITHUB_WORKFLOW_REF", "")
    repository = environ.get("GITHUB_REPOSITORY", "")
    if environ.get("GITHUB_ACTIONS") == "true" and workflow_ref and repository:
        server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        path, _, ref = workflow_ref.removeprefix(f"{repository}/").partition("@")
        # the run, not its attempt: "re-run failed jobs" keeps the artifacts (and statements)
        # of the jobs that passed, whose attempt number is the earlier one
        run_id = environ.get("GITHUB_RUN_ID", "")
        git_ref = environ.get("GITHUB_REF") or ref
        return RunIdentity(
            builder_id=explicit or f"{server}/{workflow_ref}", environment="github-actions",
            workflow={"ref": git_ref, "repository": f"{server}/{repository}", "path": path},
            invocation_id=f"{server}/{repository}/actions/runs/{run_id}" if run_id else None,
            source_uri=f"git+{server}/{repository}@{git_ref}",
            source_commit=environ.get("GITHUB_SHA") or source_revision, source_dirty=None)
    return RunIdentity(builder_id=explicit or LOCAL_BUILDER, environment="local",
                       source_commit=source_revision, source_dirty=source_dirty)


def statement_document(subjects: Mapping[str, str], run: RunIdentity,
                       tool_version: str) -> dict[str, Any]:
    """The Statement naming `subjects` (archive file name -> sha256)."""
    external: dict[str, Any] = {"environment": run.environment}
    if run.workflow is not None:
        external["workflow"] = dict(run.workflow)
    resolved: list[dict[str, Any]] = []
    if run.source_commit is not None:
        source: dict[str, Any] = {"digest": {"gitCommit": run.source_commit}}
        if run.source_uri is not None:
            source["uri"] = run.source_uri
        else:
            source["name"] = "source"
        if run.source_dirty is not None:
            source["annotations"] = {"dirty": run.source_dirty}
        resolved.append(source)
    run_details: dict[str, Any] = {"builder": {"id": run.builder_id,
                                               "version": {"horon-bundle": tool_version}}}
    if run.invocation_id is not None:
        run_details["metadata"] = {"invocationId": run.invocation_id}
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": sha}}
                    for name, sha in sorted(subjects.items())],
        "predicateType": PREDICATE_TYPE,
        "predicate": {"buildDefinition": {"buildType": RELEASE_BUILD_TYPE,
                                          "externalParameters": external,
                                          "resolvedDependencies": resolved},
                      "runDetails": run_details},
    }


def statement_name(subjects: Mapping[str, str]) -> str:
    """`horon-build-<12 hex>.intoto.jsonl`: distinct for distinct sets of archives."""
    listing = "".join(f"{sha}  {name}\n" for name, sha in sorted(subjects.items()))
    return f"{STATEMENT_PREFIX}{hash_bytes(listing.encode()).sha256[:12]}{STATEMENT_SUFFIX}"


def line_bytes(document: dict[str, Any]) -> bytes:
    """One Statement on one line: sorted keys, no spaces, ASCII (the JSON Lines form of the
    toolchain's canonical output); what a DSSE envelope signs, without the newline."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def statement_lines(documents: list[dict[str, Any]]) -> bytes:
    """The file's bytes: each Statement on a line of its own."""
    return b"".join(line_bytes(document) + b"\n" for document in documents)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseStatement:
    subjects: dict[str, str]  # archive name -> sha256
    predicate: dict[str, Any]
    payload: bytes  # the line without its newline: what a DSSE envelope signs

    @property
    def document(self) -> dict[str, Any]:
        return {"_type": STATEMENT_TYPE,
                "subject": [{"name": n, "digest": {"sha256": s}}
                            for n, s in sorted(self.subjects.items())],
                "predicateType": PREDICATE_TYPE, "predicate": self.predicate}


def _bad(source: str, where: str, what: str) -> Refused:
    return Refused.one(codes.STATEMENT_INVALID, f"{source}: {where}: {what}")


def parse_statement(payload: bytes, *, source: str, where: str = "statement") -> ReleaseStatement:
    document = read_json(payload, source=source, max_bytes=MAX_STATEMENT_FILE_BYTES,
                         max_depth=_MAX_LINE_DEPTH)
    if not isinstance(document, dict) or set(document) != _TOP:
        keys = sorted(document) if isinstance(document, dict) else type(document).__name__
        raise _bad(source, where, f"not an in-toto Statement (keys {keys})")
    if document["_type"] != STATEMENT_TYPE:
        raise _bad(source, f"{where}._type", f"{describe_value(document['_type'])}, expected "
                                             f"{STATEMENT_TYPE}")
    if document["predicateType"] != PREDICATE_TYPE:
        raise _bad(source, f"{where}.predicateType",
                   f"{describe_value(document['predicateType'])}, expected {PREDICATE_TYPE}")
    predicate = document["predicate"]
    definition = predicate.get("buildDefinition") if isinstance(predicate, dict) else None
    build_type = definition.get("buildType") if isinstance(definition, dict) else None
    if build_type != RELEASE_BUILD_TYPE:
        raise _bad(source, f"{where}.predicate.buildDefinition.buildType",
                   f"{describe_value(build_type)}, expected {RELEASE_BUILD_TYPE}")
    raw = document["subject"]
    if not isinstance(raw, list) or not raw or len(raw) > MAX_STATEMENT_SUBJECTS:
        raise _bad(source, f"{where}.subject",
                   f"not a list of 1 to {MAX_STATEMENT_SUBJECTS} archives")
    subjects: dict[str, str] = {}
    for index, item in enumerate(raw):
        at = f"{where}.subject[{index}]"
        digest = item.get("digest") if isinstance(item, dict) else None
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(item, dict) or set(item) != {"name", "digest"} \
                or not isinstance(digest, dict) or set(digest) != {"sha256"}:
            raise _bad(source, at, "not {name, digest: {sha256}}")
        sha = digest["sha256"]
        if not isinstance(sha, str) or not SHA256_HEX.fullmatch(sha):
            raise _bad(source, f"{at}.digest.sha256", f"{describe_value(sha)} is not a SHA-256")
        if not isinstance(name, str) or "/" in name or name.startswith(".") \
                or path_problem(name):
            raise _bad(source, f"{at}.name", f"{describe_value(name)} is not an archive's file "
                                             "name")
        if name in subjects:
            raise _bad(source, at, f"{name!r} listed twice")
        subjects[name] = sha
    return ReleaseStatement(subjects=subjects, predicate=predicate, payload=payload)


def parse_statement_file(data: bytes, *, source: str) -> list[ReleaseStatement]:
    """Every line of a `*.intoto.jsonl` file (blank lines refused: one Statement per line)."""
    if len(data) > MAX_STATEMENT_FILE_BYTES:
        raise _bad(source, "file", f"{len(data)} bytes, limit {MAX_STATEMENT_FILE_BYTES}")
    if not data.endswith(b"\n"):
        raise _bad(source, "file", "does not end with a newline (one Statement per line)")
    lines = data[:-1].split(b"\n")
    if len(lines) > MAX_STATEMENT_LINES:
        raise _bad(source, "file", f"{len(lines)} lines, limit {MAX_STATEMENT_LINES}")
    return [parse_statement(line, source=source, where=f"line {number}")
            for number, line in enumerate(lines, 1)]


def merge_statements(statements: list[tuple[str, ReleaseStatement]]) -> dict[str, Any]:
    """One Statement naming every archive of `statements` (source, statement), which must come
    from one run: the same predicate (builder, invocation, source), no name with two digests."""
    if not statements:
        raise Refused.one(codes.STATEMENT_INVALID, "no statement to merge")
    first_source, first = statements[0]
    subjects: dict[str, str] = {}
    origin: dict[str, str] = {}
    for source, statement in statements:
        if statement.predicate != first.predicate:
            raise Refused.one(codes.STATEMENT_CONFLICT, (
                f"{source}: {_first_difference(first.predicate, statement.predicate)} differs "
                f"from {first_source}'s: not the same run"))
        for name, sha in statement.subjects.items():
            if subjects.get(name, sha) != sha:
                raise Refused.one(codes.STATEMENT_CONFLICT, (
                    f"{name}: sha256 {subjects[name]} in {origin[name]}, {sha} in {source}"))
            subjects[name] = sha
            origin.setdefault(name, source)
    if len(subjects) > MAX_STATEMENT_SUBJECTS:
        raise Refused.one(codes.STATEMENT_INVALID,
                          f"{len(subjects)} archives, limit {MAX_STATEMENT_SUBJECTS}")
    return ReleaseStatement(subjects=subjects, predicate=first.predicate, payload=b"").document


def _first_difference(left: object, right: object, where: str = "predicate") -> str:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            if left.get(key) != right.get(key):
                return _first_difference(left.get(key), right.get(key), f"{where}.{key}")
    return where
