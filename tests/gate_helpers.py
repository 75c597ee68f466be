"""Helpers for the gate tests: build fixture workspaces in place, check refusals left nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from horon_bundle.core.strictjson import canonical_bytes
from tests.helpers import FIXTURES, CliResult, assert_refused, cli, edit_provenance

ABI_FAULTS = FIXTURES / "abi-faults"
QA_DEFAULT_CHAIN = FIXTURES / "qa-default-chain"
QA_TRANSITIVE = FIXTURES / "qa-transitive"
QA_MEMBER_ONLY = FIXTURES / "qa-member-only"


def build(workspace: Path, out: Path, target_dir: Path, *args: str | Path,
          env: dict[str, str] | None = None) -> CliResult:
    return cli("build", workspace, "--out", out, "--target-dir", target_dir, *args, env=env)


def assert_nothing_built(out: Path) -> None:
    """No bundle, archive, staging or scratch directory left in the output directory."""
    left = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert left == [], left


def assert_refused_cleanly(result: CliResult, code: str, out: Path) -> None:
    assert_refused(result, code)
    assert_nothing_built(out)


def error_lines(result: CliResult, code: str) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith(f"ERROR {code}:")]


def rewrite_record(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Hand-edit an artifact record and re-serialise it canonically (as `compile` writes)."""
    document = json.loads(path.read_bytes())
    change(document)
    path.write_bytes(canonical_bytes(document))


def byproducts(bundle: Path) -> dict[str, Any]:
    statement = json.loads((bundle / "provenance.json").read_text())
    return {b["name"]: b["annotations"] for b in statement["predicate"]["runDetails"]["byproducts"]}


def resign_provenance(bundle: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit provenance.json, then make its byproduct digests, SHA256SUMS and plugin.json's
    provenance asset agree with it, so that only the provenance's own content can be refused."""
    edit_provenance(bundle, change)
