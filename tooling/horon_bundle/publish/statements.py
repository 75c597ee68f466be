"""Which archives of DIST_DIR a release is: the subjects of its release statements.

When DIST_DIR holds release statements (`*.intoto.jsonl`, written by `build` and `statement
merge`), the release is exactly the union of their subjects: every subject must be in DIST_DIR
with the bytes its statement names, and an archive that no statement names — left from an
earlier build, or added by hand — is refused, named (or, with `--leave-out-unlisted`, left
out and said so). A DIST_DIR with no statement at all publishes every archive, each fully
checked as before, with the warning `publish.no-statement`. Each published archive carries the
statements naming it (and their Sigstore bundles): the signed ones when any is signed. With a
signer required, an archive a signed statement names (verified for that signer) needs no
signature of its own: one signature stands for the release.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.inputs import read_input
from horon_bundle.model.release_statement import (
    MAX_STATEMENT_FILE_BYTES,
    STATEMENT_SUFFIX,
    ReleaseStatement,
    parse_statement,
    parse_statement_file,
)
from horon_bundle.model.sidefiles import SIGNATURE_SUFFIX
from horon_bundle.publish.release import (
    ROLE_STATEMENT,
    ROLE_STATEMENT_SIGNATURE,
    STATEMENT_MEDIA_TYPE,
    ReleaseItem,
    SideFile,
    read_signature,
)
from horon_bundle.verify.signature import SignatureVerifier, verified_statement_payload


@dataclass(slots=True)
class _Statement:
    path: Path
    statements: list[ReleaseStatement]
    file: SideFile
    signature: SideFile | None

    def names(self, archive: str) -> bool:
        return any(archive in s.subjects for s in self.statements)


@dataclass(slots=True)
class Selection:
    """The archives to publish, what was found wrong, and what to attach to each."""

    archives: list[Path]
    findings: Findings = field(default_factory=Findings)
    warnings: list[Finding] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    subjects: dict[str, str] = field(default_factory=dict)
    statements: list[_Statement] = field(default_factory=list)

    def bound(self, item: ReleaseItem) -> tuple[ReleaseItem, list[Finding]]:
        """`item` with the statements naming it attached, and a finding when its bytes are
        not those its statements name."""
        if not self.statements:
            return item, []
        name = item.archive.name
        wanted = self.subjects.get(name)
        if wanted is not None and wanted != item.digest.sha256:
            return item, [Finding(codes.PUBLISH_SUBJECT_MISSING,
                                  f"{name}: sha256 {item.digest.sha256}; the release statement "
                                  f"names {wanted}")]
        naming = [s for s in self.statements if s.names(name)]
        signed = [s for s in naming if s.signature is not None]
        attached: list[SideFile] = []
        for statement in signed or naming:
            attached.append(statement.file)
            if statement.signature is not None:
                attached.append(statement.signature)
        return dataclasses.replace(item, statements=tuple(attached)), []


def attested(selection: Selection, verifier: SignatureVerifier) -> tuple[frozenset[str],
                                                                         list[Finding]]:
    """The archive digests a signed statement of DIST_DIR attests for the required signer
    (read from the verified payload, never from the file beside it): such an archive needs
    no signature of its own. A signed statement that does not verify is a refusal."""
    digests: set[str] = set()
    problems: list[Finding] = []
    for statement in selection.statements:
        if statement.signature is None:
            continue
        bundle = statement.path.with_name(statement.path.name + SIGNATURE_SUFFIX)
        payload = verified_statement_payload(bundle, verifier)
        if isinstance(payload, list):
            problems.extend(payload)
            continue
        try:
            digests.update(parse_statement(payload, source=bundle.name).subjects.values())
        except Refused as exc:
            problems.extend(exc.findings)
    return frozenset(digests), problems


def find_statements(dist_dir: Path) -> list[Path]:
    return sorted((p for p in dist_dir.iterdir()
                   if p.name.endswith(STATEMENT_SUFFIX) and not p.name.startswith(".")),
                  key=lambda p: os.fsencode(p.name))


def select_archives(dist_dir: Path, archives: list[Path], *,
                    leave_out_unlisted: bool = False) -> Selection:
    selection = Selection(archives=list(archives))
    findings = selection.findings
    paths = find_statements(dist_dir)
    if not paths:
        selection.warnings.append(Finding(
            codes.PUBLISH_NO_STATEMENT,
            f"{dist_dir}: no release statement (*{STATEMENT_SUFFIX}) beside the archives; "
            f"publishing all {len(archives)} archive(s) in it, each fully checked"))
        return selection
    origin: dict[str, str] = {}
    for path in paths:
        try:
            data = read_input(path, limit=MAX_STATEMENT_FILE_BYTES, what="statement",
                              follow_symlinks=False)
            assert data is not None
            parsed = parse_statement_file(data, source=path.name)
        except Refused as exc:
            findings.extend(exc.findings)
            continue
        signature = read_signature(path, findings, suffix=SIGNATURE_SUFFIX,
                                   role=ROLE_STATEMENT_SIGNATURE)
        selection.statements.append(_Statement(
            path=path, statements=parsed, signature=signature,
            file=SideFile(role=ROLE_STATEMENT, name=path.name, data=data,
                          digest=hash_bytes(data), media_type=STATEMENT_MEDIA_TYPE)))
        for statement in parsed:
            for name, sha in statement.subjects.items():
                held = selection.subjects.setdefault(name, sha)
                if held != sha:
                    findings.add(codes.STATEMENT_CONFLICT,
                                 f"{name}: sha256 {held} in {origin[name]}, {sha} in {path.name}")
                origin.setdefault(name, path.name)
    present = {a.name for a in archives}
    for name in sorted(set(selection.subjects) - present):
        findings.add(codes.PUBLISH_SUBJECT_MISSING,
                     f"{name}: named by {origin[name]} but not in {dist_dir}")
    chosen = []
    for archive in archives:
        if archive.name in selection.subjects:
            chosen.append(archive)
        elif leave_out_unlisted:
            selection.left_out.append(archive.name)
        else:
            findings.add(codes.PUBLISH_NOT_SUBJECT,
                         f"{archive.name}: in {dist_dir} but no release statement names it "
                         f"({', '.join(p.name for p in paths)}); not publishing it")
    selection.archives = chosen
    return selection
