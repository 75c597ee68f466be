"""Which schema in docs/schemas/ describes which document: one row per document kind.

A document carrying a `format` is found by it (`BY_FORMAT`); one without (a refusal, a ref, a
hosted marketplace, provenance parameters) by what it is (`BY_KIND`). `validate` checks a
document against its row's schema, and every nested object carrying a registered `format`
(a catalogue inside an install result, each report of `verify-reports`) against its own.
tests/model/test_schemas.py fails when the package names a `horon.…vN` format with no row, a
row names no schema file, or a schema file has no row; tests/cli/test_streams.py validates
the real output of every command and kind, and the files they write.

A new document is one row here and one schema file. The release statement (`*.intoto.jsonl`,
an in-toto Statement per line) becomes the row
`"https://in-toto.io/Statement/v1": "release-statement.schema.json"` in `BY_TYPE`, found by
its `_type` as in-toto documents name themselves.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from tests.helpers import REPO

SCHEMAS = REPO / "docs" / "schemas"

BY_FORMAT: dict[str, str] = {
    "horon.plugin.v1": "plugin.schema.json",
    "horon.artifact-record.v1": "artifact-record.schema.json",
    "horon.build-result.v1": "build-result.schema.json",
    "horon.harness-build-result.v1": "harness-build-result.schema.json",
    "horon.build-run.v1": "build-run.schema.json",
    "horon.compile-result.v1": "compile-result.schema.json",
    "horon.new-result.v1": "new-result.schema.json",
    "horon.verify-report.v1": "verify-report.schema.json",
    "horon.harness-verify-report.v1": "verify-report.schema.json",
    "horon.verify-reports.v1": "verify-report.schema.json",
    "horon.doctor-report.v1": "doctor-report.schema.json",
    "horon.inspect-report.v1": "inspect-report.schema.json",
    "horon.reproduce-report.v1": "reproduce-report.schema.json",
    "horon.sign-result.v1": "sign-result.schema.json",
    "horon.publish-receipt.v1": "publish-receipt.schema.json",
    "horon.yank-result.v1": "yank-result.schema.json",
    "horon.yank.v1": "yank-mark.schema.json",
    "horon.store-entry.v1": "store-entry.schema.json",
    "horon.store-harness-entry.v1": "store-harness-entry.schema.json",
    "horon.file-store.v1": "file-store.schema.json",
    "horon.install-result.v1": "install-result.schema.json",
    "horon.install-change.v1": "install-change.schema.json",
    "horon.install-check.v1": "install-check.schema.json",
    "horon.install-status.v1": "install-status.schema.json",
    "horon.agent-home.v1": "agent-home-state.schema.json",
    "horon.fetch-result.v1": "fetch-result.schema.json",
    "horon.harness-catalogue.v1": "harness-catalogue.schema.json",
    "horon.marketplace-index.v1": "marketplace-index.schema.json",
    "horon.host-profile.v1": "host-profile.schema.json",
    "horon.host-profiles.v1": "host-profiles.schema.json",
    "horon.codes.v1": "codes.schema.json",
    "horon.install-checks.v1": "install-checks.schema.json",
    "horon.log-keygen.v1": "log-keygen-result.schema.json",
    "horon.log-verify.v1": "log-verify-result.schema.json",
    "horon.statement-merge.v1": "statement-merge-result.schema.json",
}
BY_KIND: dict[str, str] = {
    "refusal": "refusal.schema.json",  # `--json` of any refused command
    "harness-ref": "harness-ref.schema.json",  # <zip>.ref.json
    "hosted-marketplace": "hosted-marketplace.schema.json",  # a store's marketplace.json
    "provenance-parameters": "provenance-parameters.schema.json",
}
# documents found by their in-toto `_type` (the release statement's row goes here)
BY_TYPE: dict[str, str] = {
    "https://in-toto.io/Statement/v1": "release-statement.schema.json",
}
# `horon.…` names in the package that are not documents of their own
NOT_DOCUMENTS: dict[str, str] = {
    "horon.wire.v0": "the ABI's wire protocol between host and library (docs/abi-v1.md)",
    "horon.wire.v1": "the ABI's wire protocol between host and library (docs/abi-v1.md)",
    "horon.abi.v1": "the .horon_abi section a plugin's library carries (docs/abi-v1.md)",
    "horon.graph.v1": "the graph inside an artifact record (artifact-record.schema.json)",
}


@cache
def validator(name: str) -> Any:
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_of(document: Any, kind: str | None = None) -> str:
    """The schema file of `document`; an AssertionError when it has none."""
    if kind is not None:
        return BY_KIND[kind]
    if isinstance(document, dict):
        if isinstance(document.get("format"), str):
            assert document["format"] in BY_FORMAT, f"no schema for {document['format']}"
            return BY_FORMAT[document["format"]]
        if isinstance(document.get("_type"), str):
            assert document["_type"] in BY_TYPE, f"no schema for {document['_type']}"
            return BY_TYPE[document["_type"]]
        if document.get("ok") is False:
            return BY_KIND["refusal"]
    raise AssertionError(f"a document with no registered schema: {str(document)[:200]}")


def validate(document: Any, kind: str | None = None) -> str:
    """Check `document` (and each nested document with a registered format) against its
    schema; the schema file's name."""
    name = schema_of(document, kind)
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.path))
    assert not errors, f"{name}: " + "; ".join(
        f"{'/'.join(map(str, e.path))}: {e.message[:200]}" for e in errors[:5])
    for nested in _nested(document, top=True):
        validate(nested)
    return name


def _nested(value: Any, *, top: bool = False) -> list[Any]:
    found = []
    if isinstance(value, dict):
        if not top and isinstance(value.get("format"), str) and value["format"] in BY_FORMAT:
            return [value]
        for item in value.values():
            found += _nested(item)
    elif isinstance(value, list):
        for item in value:
            found += _nested(item)
    return found
