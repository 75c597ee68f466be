"""Developer and CI sessions. `nox -s bundle` is the plugin author's one command."""

from __future__ import annotations

import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["bundle", "tests", "lint"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
EXAMPLE = ROOT / "templates" / "plugin"
DIST = ROOT / "dist"


@nox.session
def bundle(session: nox.Session) -> None:
    """Build, verify and archive a plugin bundle (default: the built-in example plugin).

    `nox -s bundle -- PATH [build options]` bundles the workspace at PATH instead.
    """
    session.install(".")
    workspace = session.posargs[0] if session.posargs else str(EXAMPLE)
    extra = session.posargs[1:]
    session.run("horon-bundle", "build", workspace, "--out", str(DIST), *extra)
    archives = sorted(DIST.glob("*.zip"), key=lambda p: p.stat().st_mtime)
    if archives:
        session.run("horon-bundle", "verify", str(archives[-1]))


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (real cargo builds; pass pytest options after --)."""
    session.install(".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict and the import-layer contracts (docs/architecture.md)."""
    session.install("-e", ".[test]", "ruff", "mypy", "nox", "import-linter")  # -e: lint-imports
    # then reads this tree, not a copy installed earlier
    session.run("ruff", "check", "tooling", "tests", "benchmarks", "noxfile.py")
    session.run("mypy", "--strict", "tooling", "tests", "noxfile.py")
    session.run("lint-imports")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks: streaming hash, archive writing, verify's memory on a 512 MiB library."""
    session.install(".[test]", "pytest-benchmark")
    session.run("pytest", "benchmarks", "-p", "no:cacheprovider", "--benchmark-columns",
                "mean,min,max", *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """Property tests of the untrusted-input readers with the large budget (the `fuzz`
    Hypothesis profile: 20,000 examples per property; docs/threat-model.md, "Fuzz budget").

    `nox -s fuzz -- -k archive` narrows it; Hypothesis keeps failing examples in .hypothesis/.
    """
    session.install(".[test]")
    session.run("pytest", "tests/test_properties.py", "-p", "no:cacheprovider", *session.posargs,
                env={"HORON_HYPOTHESIS_PROFILE": "fuzz"})


@nox.session(default=False)
def dist(session: nox.Session) -> None:
    """Build our own sdist and wheel and check them with twine."""
    session.install("build", "twine")
    session.run("python", "-m", "build", "--outdir", str(ROOT / "build" / "dist"))
    session.run("twine", "check", "--strict", *map(str, (ROOT / "build" / "dist").glob("*")))


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run with nox")
