"""Who built a bundle: the builder id recorded in provenance (part of the content address)."""

from __future__ import annotations

import os

LOCAL_BUILDER = "urn:horon-bundle:builder:local"


def builder_id(explicit: str | None = None) -> str:
    """--builder-id, else HORON_BUILDER_ID, else the GitHub workflow, else the local builder."""
    if explicit:
        return explicit
    if value := os.environ.get("HORON_BUILDER_ID"):
        return value
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_WORKFLOW_REF"):
        server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{os.environ['GITHUB_WORKFLOW_REF']}"
    return LOCAL_BUILDER
