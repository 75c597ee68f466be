"""How the release workflow `new` writes installs horon-bundle: by an immutable pin, or not at all.

The workflow's jobs run `.github/install-horon-bundle.sh`, which `new` writes from what it
knows of the horon-bundle running it (its `direct_url.json`, PEP 610):

- installed from a commit of a named git repository (`pip install "horon-bundle @
  git+https://…@<commit>"`): that commit, which cannot become someone else's code;
- anything else — a checkout (editable), a locally built wheel, an index install whose wheel
  hash is not known here: a placeholder that **fails closed**, stopping the job with an
  error saying what to put there (hashes with `--require-hashes`, or a commit), and `new` says
  so. Never a bare name and version, which installs whatever the index serves under that name
  (docs/publishing.md, "Pinning the toolchain").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata

INSTALL_SCRIPT = ".github/install-horon-bundle.sh"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPOSITORY = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]+)?/[A-Za-z0-9._~/-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Pin:
    kind: str  # "commit" or "placeholder"
    requirement: str | None  # the pip requirement, for a commit
    reason: str  # why a placeholder (empty for a commit)

    def script(self, version: str) -> str:
        header = ("#!/bin/sh\n# Installs the horon-bundle that builds, signs and publishes this "
                  "repository's releases, by an\n# immutable pin only (written by `horon-bundle "
                  "new`; docs/publishing.md, \"Pinning the toolchain\").\nset -eu\n")
        if self.kind == "commit":
            assert self.requirement is not None
            return header + f'exec python -m pip install "{self.requirement}"\n'
        return header + (
            f"# NOT PINNED YET: `new` could not compute an immutable pin ({self.reason}).\n"
            "# Replace the two lines below with one of:\n"
            "#   python -m pip install --require-hashes -r .github/horon-bundle.txt\n"
            f"#     (that file: `echo 'horon-bundle=={version}' | uv pip compile "
            "--generate-hashes - -o .github/horon-bundle.txt`)\n"
            '#   python -m pip install "horon-bundle @ git+https://github.com/OWNER/REPO@'
            '<40-hex commit>"\n'
            f'echo "::error file={INSTALL_SCRIPT}::horon-bundle is not pinned: set '
            f'{INSTALL_SCRIPT} to install it by hashes (--require-hashes) or by a commit of '
            'a named repository (see the comment in it)" >&2\n'
            "exit 1\n")


def current_pin() -> Pin:
    """The pin of the horon-bundle running now, or a placeholder saying why there is none."""
    try:
        text = metadata.distribution("horon-bundle").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return Pin(kind="placeholder", requirement=None, reason="horon-bundle runs from a "
                                                                "source tree, not installed")
    return pin_from_direct_url(text)


def pin_from_direct_url(text: str | None) -> Pin:
    if text is None:
        return Pin(kind="placeholder", requirement=None,
                   reason="installed from a package index: the hash of its wheel is not "
                          "known here")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        return Pin(kind="placeholder", requirement=None, reason="its direct_url.json is "
                                                                "unreadable")
    url = document.get("url")
    vcs = document.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and isinstance(url, str):
        commit = vcs.get("commit_id")
        if isinstance(commit, str) and _COMMIT.fullmatch(commit) \
                and _REPOSITORY.fullmatch(url):
            return Pin(kind="commit", requirement=f"horon-bundle @ git+{url}@{commit}", reason="")
        return Pin(kind="placeholder", requirement=None,
                   reason="installed from git, but not from a commit of an https repository")
    if isinstance(document.get("dir_info"), dict):
        return Pin(kind="placeholder", requirement=None, reason="installed from a checkout")
    return Pin(kind="placeholder", requirement=None,
               reason="installed from a wheel or archive file")
