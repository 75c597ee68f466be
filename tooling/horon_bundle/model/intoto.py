"""The in-toto Statement v1 and SLSA provenance v1 type URIs every statement we write names.

Apart from `model.provenance` (the native predicate) so that a harness statement, which
names the same types, never loads the native graph and evidence models (start-up)."""

from __future__ import annotations

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
