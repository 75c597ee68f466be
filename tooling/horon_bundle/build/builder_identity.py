"""Who built a bundle: the builder id recorded in provenance (part of the content address)."""

from __future__ import annotations

import os
from collections.abc import Mapping

LOCAL_BUILDER = "urn:horon-bundle:builder:local"


def builder_id(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """--builder-id, else HORON_BUILDER_ID, else the GitHub workflow, else the local builder."""
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    if value := env.get("HORON_BUILDER_ID"):
        return value
    if env.get("GITHUB_ACTIONS") == "true" and env.get("GITHUB_WORKFLOW_REF"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{env['GITHUB_WORKFLOW_REF']}"
    return LOCAL_BUILDER
