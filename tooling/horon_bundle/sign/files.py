"""Signing files: every input checked first, signed in memory, each signature written atomically.

An archive — a native bundle archive or a harness zip, told apart by content — must verify
(its ref beside it too, for a harness zip), and its provenance statement is also signed, as a
DSSE envelope: `<archive>.provenance.sigstore.json`; a record must be one `compile` wrote; a
release statement (`*.intoto.jsonl`, one Statement naming archives beside it) is signed once
as a DSSE envelope, `<statement>.sigstore.json`: one signature for all its archives.
Nothing is written until everything is signed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.files import write_atomic
from horon_bundle.core.hashing import Digest, hash_bytes, hash_file
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.model.harness.layout import PROVENANCE_NAME
from horon_bundle.model.provenance import MAX_PROVENANCE_BYTES
from horon_bundle.model.record import load_record
from horon_bundle.model.release_statement import STATEMENT_SUFFIX
from horon_bundle.sign.signer import Signer
from horon_bundle.sign.statements import read_statement_file
from horon_bundle.verify.audit import AuditOptions
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.route import verify_any
from horon_bundle.verify.signature import provenance_signature_path, signature_path

KIND_ARCHIVE, KIND_RECORD, KIND_STATEMENT = "archive", "record", "statement"


@dataclass(frozen=True, slots=True, kw_only=True)
class SignInput:
    """A file ready to sign: what it is, its digest, and (archives) its provenance bytes."""

    path: Path
    kind: str
    digest: Digest
    statement: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Signed:
    path: Path
    kind: str
    sha256: str
    signature: Path
    statement_signature: Path | None


def prepare(paths: list[Path]) -> list[SignInput]:
    """Check every input before signing any: archives verify, records parse strictly."""
    inputs: list[SignInput] = []
    problems: list[Finding] = []
    for path in paths:
        try:
            inputs.append(_prepare_one(path))
        except Refused as exc:
            problems.extend(exc.findings)
    if problems:
        raise Refused(problems)
    return inputs


def _prepare_one(path: Path) -> SignInput:
    if not path.is_file() or path.is_symlink():
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: not a regular file")
    if path.name.endswith(STATEMENT_SUFFIX):
        return _prepare_statement(path)
    if path.suffix == ".zip":
        refusal = Finding(codes.SIGNING_INPUT,
                          f"{path.name}: the archive does not verify; not signing it")
        try:
            report = verify_any(path, AuditOptions(), HarnessOptions())
        except Refused as exc:
            raise Refused([refusal, *exc.findings]) from None
        if not report.ok:
            raise Refused([refusal, *report.findings])
        statement_path, statement_sha256 = _statement(report)
        with open_bundle(path) as source:
            statement = source.read_small(statement_path, MAX_PROVENANCE_BYTES)
        if hash_bytes(statement).sha256 != statement_sha256:
            raise Refused.one(codes.SIGNING_INPUT, f"{path.name}: changed while it was read")
        return SignInput(path=path, kind=KIND_ARCHIVE, digest=hash_file(path),
                         statement=statement)
    try:
        _, digest = load_record(path)
    except Refused as exc:
        raise Refused([Finding(codes.SIGNING_INPUT,
                               f"{path.name}: neither a .zip bundle archive nor an artifact "
                               "record"), *exc.findings]) from None
    return SignInput(path=path, kind=KIND_RECORD, digest=digest)


def _prepare_statement(path: Path) -> SignInput:
    """A release statement is signed once, as one DSSE envelope: it must hold one Statement
    (merge the jobs' statements first), and every archive it names must be beside it with
    those bytes — what is signed is what is there."""
    statements = read_statement_file(path)
    if len(statements) != 1:
        raise Refused.one(codes.SIGNING_INPUT,
                          f"{path.name}: {len(statements)} statements; sign one release "
                          "statement (`horon-bundle statement merge` joins them)")
    statement = statements[0]
    problems = []
    for name, sha in sorted(statement.subjects.items()):
        archive = path.parent / name
        if not archive.is_file() or archive.is_symlink():
            problems.append(Finding(codes.SIGNING_INPUT,
                                    f"{path.name}: names {name}, which is not beside it"))
        elif (actual := hash_file(archive).sha256) != sha:
            problems.append(Finding(codes.SIGNING_INPUT,
                                    f"{path.name}: names {name} with sha256 {sha}; the file "
                                    f"beside it is {actual}"))
    if problems:
        raise Refused(problems)
    return SignInput(path=path, kind=KIND_STATEMENT, digest=hash_file(path),
                     statement=statement.payload)


def _statement(report: VerifyReport) -> tuple[str, str]:
    """Where a verified archive keeps its provenance statement, and its digest."""
    if isinstance(report, HarnessReport):
        return PROVENANCE_NAME, report.digests[PROVENANCE_NAME].sha256
    assert report.manifest is not None
    asset = report.manifest.asset("provenance")
    assert asset is not None
    return asset.file.path, asset.file.sha256


def sign_files(inputs: list[SignInput], signer: Signer,
               reporter: Reporter | None = None) -> list[Signed]:
    """Sign everything in memory first, then write each signature atomically."""
    reporter = reporter or SilentReporter()
    made: list[tuple[SignInput, bytes, bytes | None]] = []
    for item in inputs:
        reporter.step(f"signing {item.path.name} ({item.kind}, sha256 {item.digest.sha256})")
        if item.kind == KIND_STATEMENT:  # one DSSE envelope, nothing else
            assert item.statement is not None
            made.append((item, signer.sign_statement(item.statement), None))
            continue
        bundle = signer.sign_digest(item.digest)
        statement = signer.sign_statement(item.statement) if item.statement else None
        made.append((item, bundle, statement))
    results = []
    for item, bundle, statement in made:
        if hash_file(item.path) != item.digest:
            raise Refused.one(codes.SIGNING_INPUT,
                              f"{item.path}: changed while it was being signed")
        target = signature_path(item.path)
        write_atomic(target, bundle)
        statement_target = None
        if statement is not None:
            statement_target = provenance_signature_path(item.path)
            write_atomic(statement_target, statement)
        results.append(Signed(path=item.path, kind=item.kind, sha256=item.digest.sha256,
                              signature=target, statement_signature=statement_target))
    return results
