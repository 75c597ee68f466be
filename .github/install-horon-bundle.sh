#!/bin/sh
# Installs horon-bundle for this repository's example release (.github/workflows/
# example-release.yml): the code of this very commit, its dependencies and build backend by
# hashes only (--require-hashes; .github/requirements/horon-bundle.txt). A plugin repository
# gets its own version of this file from `horon-bundle new` (docs/publishing.md, "Pinning the
# toolchain").
set -eu
python -m pip install --require-hashes -r .github/requirements/horon-bundle.txt
python -m pip install --no-deps --no-build-isolation --no-index .
