"""Observing what a library advertises about itself: its static section, and the probe where
it runs.

The section is read first, without loading anything (a malformed one is `abi.section`). When
the library can be loaded on this host the probe runs too (in a contained child process),
both must say the same (`abi.section-mismatch`, both values shown) and the result is observed
by both. For a target that cannot be loaded here the section alone gives the advertised
metadata; with neither, nothing is advertised and the bundle says so.
"""

from __future__ import annotations

from pathlib import Path

from horon_bundle.abi.section import read_section_file
from horon_bundle.cargo.toolchain import Toolchain
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.reporter import Reporter
from horon_bundle.load.probe import probe_advertised
from horon_bundle.model.evidence import Advertised


def read_advertised(library: Path, *, target: str, toolchain: Toolchain, reporter: Reporter,
                    timeout: float) -> tuple[Advertised | None, list[str]]:
    """The library's advertised metadata, and notes saying where it came from."""
    notes: list[str] = []
    section = read_section_file(library, target=target)
    if target != toolchain.host:
        if section is None:
            notes.append(f"{target} libraries cannot be loaded on {toolchain.host} and this one "
                         "has no .horon_abi section: advertised features not checked")
        else:
            notes.append(f"{target} libraries cannot be loaded on {toolchain.host}: advertised "
                         "metadata read from the static .horon_abi section")
        return section, notes
    reporter.step("reading the advertised ABI metadata in a child process")
    probed = probe_advertised(library, timeout=timeout)
    if section is None:
        notes.append(f"{library.name} has no .horon_abi section: advertised metadata from the "
                     "probe alone")
        return probed, notes
    if not probed.same_metadata(section):
        raise Refused.one(codes.ABI_SECTION_MISMATCH,
                          f"{library.name}: the handshake advertises {probed.summary()}, the "
                          f".horon_abi section says {section.summary()}")
    return merge_observations(probed, section), notes


def merge_observations(*observations: Advertised) -> Advertised:
    """One Advertised whose observed_by lists every observer (all must agree already)."""
    first = observations[0]
    observers = {o for a in observations for o in a.observed_by}
    ordered = tuple(o for o in ("probe", "static-section") if o in observers)
    return Advertised(abi_major=first.abi_major, abi_minor=first.abi_minor,
                      wire_schema=first.wire_schema, features=first.features,
                      plugin_id=first.plugin_id, observed_by=ordered)
