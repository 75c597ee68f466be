"""The files the toolchain writes beside an archive, outside its content address.

    <archive>.sha256                   `sha256sum` line for the archive
    <archive>.build.json               this run's non-deterministic facts (horon.build-run.v1)
    <archive>.sigstore.json            Sigstore bundle signing the archive's digest
    <archive>.provenance.sigstore.json DSSE envelope signing the bundle's provenance statement
"""

from __future__ import annotations

from pathlib import Path

DIGEST_SUFFIX = ".sha256"
BUILD_RECORD_SUFFIX = ".build.json"
SIGNATURE_SUFFIX = ".sigstore.json"
PROVENANCE_SIGNATURE_SUFFIX = ".provenance.sigstore.json"
BUILD_RECORD_FORMAT = "horon.build-run.v1"


def beside(artifact: Path, suffix: str) -> Path:
    """`<artifact><suffix>` in the artifact's directory."""
    return artifact.with_name(artifact.name + suffix)
