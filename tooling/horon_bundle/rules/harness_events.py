"""Hook events against host profiles: an event no profile knows is refused; one the chosen
host cannot fire is named in a warning (the bundle stays valid), never silently ignored."""

from __future__ import annotations

from collections.abc import Sequence

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.model.harness.catalogue import Catalogue
from horon_bundle.model.harness.profile import HostProfile

_FATES = {"understood": "understood but not fired", "absent": "absent",
          "unknown": "not in its profile"}


def judge_events(catalogue: Catalogue, profiles: Sequence[HostProfile],
                 host: HostProfile | None) -> tuple[Findings, Findings]:
    """(refusals, warnings) for the events the catalogue's hooks declare."""
    refusals, warnings = Findings(), Findings()
    known = frozenset().union(*(p.known for p in profiles)) if profiles else frozenset()
    if host is not None:
        known |= host.known
    folded = {name.casefold(): name for name in known}
    reported: set[str] = set()
    for hook in catalogue.hooks:
        event = hook.event
        where = f"{hook.source}: {hook.where}"
        if event not in known:
            guess = folded.get(event.casefold())
            hint = f" (did you mean {guess}?)" if guess else ""
            refusals.add(codes.HARNESS_UNKNOWN_EVENT,
                         f"{where}: event {event!r} is known to no host profile{hint}")
        elif host is not None and host.fate(event) != "fired" and event not in reported:
            reported.add(event)
            warnings.add(codes.HARNESS_EVENT_NOT_FIRED,
                         f"{where}: {host.token} cannot fire {event} "
                         f"({_FATES[host.fate(event)]}): its hooks never run there")
    return refusals, warnings
