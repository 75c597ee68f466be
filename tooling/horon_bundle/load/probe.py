"""The build's probe: load the library in a child, perform a correct handshake, read the table."""

from __future__ import annotations

from pathlib import Path

from horon_bundle.abi.wire import parse_list
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.load.runner import DEFAULT_TIMEOUT, refusal_for, run_child
from horon_bundle.model.evidence import Advertised


def probe_advertised(library: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Advertised:
    """Load the library in a child, perform a correct handshake, return what it advertises."""
    outcome = run_child("handshake", library, timeout=timeout)
    refusal = refusal_for(outcome, library, "the handshake")
    if refusal is not None:
        raise refusal
    answer = outcome.answer or {}
    if "error" in answer:
        raise Refused.one(codes.ABI_LOAD, f"{library.name}: {answer['error']}")
    status = answer.get("status")
    if status != 0:
        raise Refused.one(codes.ABI_STATUS,
                          f"{library.name}: a correct request was answered with status {status}")
    table = answer["table"]
    problems = []
    if table["struct_size"] < 104:
        problems.append(f"struct_size {table['struct_size']} < 104")
    for key in ("wire_schema", "features", "plugin_id"):
        if table[key] is None:
            problems.append(f"{key} is NULL")
    if problems:
        raise Refused.one(codes.ABI_METADATA, f"{library.name}: " + "; ".join(problems))
    return Advertised(abi_major=table["abi_major"], abi_minor=table["abi_minor"],
                      wire_schema=table["wire_schema"], features=parse_list(table["features"]),
                      plugin_id=table["plugin_id"], observed_by=("probe",))
