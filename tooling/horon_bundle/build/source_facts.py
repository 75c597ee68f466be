"""Facts about the plugin's source: git revision, dirty flag (taken before building), time."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.build.archive import ZIP_EPOCH_MIN, clamp_epoch
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import Completed, run_quiet


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceFacts:
    revision: str | None
    dirty: bool | None
    commit_time: int | None
    changes: tuple[str, ...] = ()  # what `git status` reported (the first few paths)

    def to_json(self) -> dict[str, object]:
        return {"revision": self.revision, "dirty": self.dirty}


_SHOWN_CHANGES = 5
_OUTPUT_DIRS = frozenset({"dist", "target"})  # build's own outputs (build/places.py)


def _git(workspace: Path, *args: str) -> Completed:
    return run_quiet(["git", "-C", str(workspace), *args], timeout=60)


def source_facts(workspace: Path) -> SourceFacts:
    """The commit the workspace is at and whether the workspace differs from it.

    Outside a git repository (or without git) there is no revision to record: all None.
    """
    inside = _git(workspace, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return SourceFacts(revision=None, dirty=None, commit_time=None)
    head = _git(workspace, "rev-parse", "--verify", "-q", "HEAD")
    if head.returncode != 0:
        return SourceFacts(revision=None, dirty=True, commit_time=None)
    status = _git(workspace, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    when = _git(workspace, "log", "-1", "--format=%ct", "HEAD")
    if status.returncode != 0 or when.returncode != 0:
        raise Refused.one(codes.SOURCE_GIT, f"{workspace}: {status.stderr.strip()[:200]}")
    changed = [line[3:] for line in status.stdout.splitlines() if line.strip()]
    return SourceFacts(revision=head.stdout.strip(), dirty=bool(changed),
                       commit_time=int(when.stdout.strip()),
                       changes=tuple(changed[:_SHOWN_CHANGES]) + (
                           (f"… {len(changed) - _SHOWN_CHANGES} more",)
                           if len(changed) > _SHOWN_CHANGES else ()))


def dirty_warnings(facts: SourceFacts) -> list[str]:
    """What a build says about its source tree: a dirty tree is recorded in the provenance
    (`source.dirty`), said here, and can be refused by an audit policy (`clean-source`)."""
    if facts.dirty and facts.revision is None:
        return ["the workspace's git repository has no commit yet: the provenance records no "
                "source revision (dirty); commit it before a release"]
    if facts.dirty and facts.revision is not None:
        ours = sorted({f"/{name}/" for path in facts.changes
                       if (name := path.rstrip("/").rsplit("/", 1)[-1]) in _OUTPUT_DIRS})
        advice = f"; list {', '.join(ours)} in .gitignore (build outputs)" if ours else ""
        return [f"the source tree differs from commit {facts.revision[:12]} "
                f"({', '.join(facts.changes)}): the provenance records it as dirty; commit "
                f"before a release{advice}"]
    return []


def source_date_epoch(facts: SourceFacts,
                      environ: Mapping[str, str] | None = None) -> tuple[int, str]:
    """SOURCE_DATE_EPOCH if set, else the last commit's time, else 1980; clamped to >= 1980."""
    raw = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if raw is not None:
        if not raw.isdigit():
            raise Refused.one(codes.ENVIRONMENT_VALUE,
                              f"SOURCE_DATE_EPOCH={raw!r} is not a non-negative integer")
        return clamp_epoch(int(raw)), "SOURCE_DATE_EPOCH"
    if facts.commit_time is not None:
        return clamp_epoch(facts.commit_time), "last commit"
    return ZIP_EPOCH_MIN, "default (no git revision)"
