"""Sessions for this plugin. Each runs the installed `horon-bundle` (install it once with
`pipx install …` or `uv tool install …`, see horon-bundle's README); none needs a virtualenv.

    nox -s bundle            build, verify and archive into dist/ (build options after --)
    nox -s verify            verify every archive in dist/ offline
    nox -s doctor            load each bundle's library in a child process, check the ABI
    nox -s install [-- HOME] install the bundles into an agent home (default: horon-bundle's,
                             $HORON_AGENT_HOME, else ~/.local/share/horon-agent)
    nox -s publish           publish dist/ (skipped unless HORON_PUBLISH_ENABLED=true and
                             HORON_PUBLISH_DESTINATION are set)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

nox.options.sessions = ["bundle", "verify", "doctor"]
ROOT = Path(__file__).parent
DIST = ROOT / "dist"


def _tool(session: nox.Session) -> str:
    tool = shutil.which("horon-bundle")
    if tool is None:
        session.error("horon-bundle is not installed: `pipx install horon-bundle` or "
                      "`uv tool install horon-bundle` (or from a wheel or git URL)")
    return tool


def _archives(session: nox.Session) -> list[str]:
    found = sorted(str(path) for path in DIST.glob("*.zip"))
    if not found:
        session.error(f"no bundle archive in {DIST}: run `nox -s bundle` first")
    return found


def _bundles(session: nox.Session) -> list[str]:
    found = sorted(str(path.parent) for path in DIST.glob("*/plugin.json"))
    if not found:
        session.error(f"no bundle directory in {DIST}: run `nox -s bundle` first")
    return found


@nox.session(python=False)
def bundle(session: nox.Session) -> None:
    """Build, verify and archive the plugin into dist/ (`-- --target T`, `-- --channel qa`)."""
    session.run(_tool(session), "build", str(ROOT), *session.posargs, external=True)


@nox.session(python=False)
def verify(session: nox.Session) -> None:
    """Verify every archive in dist/ offline (`-- --policy FILE` and other verify options)."""
    session.run(_tool(session), "verify", *_archives(session), *session.posargs,
                external=True)


@nox.session(python=False)
def doctor(session: nox.Session) -> None:
    """Load each bundle's library in a child process and check the ABI v1 contract."""
    tool = _tool(session)
    for path in _bundles(session):
        session.run(tool, "doctor", path, *session.posargs, external=True)


@nox.session(python=False)
def install(session: nox.Session) -> None:
    """Install every bundle of dist/ into an agent home: `nox -s install [-- HOME [OPTIONS]]`
    (without HOME, the one horon-bundle uses: $HORON_AGENT_HOME, else the XDG data home)."""
    tool = _tool(session)
    home = ["--home", session.posargs[0]] if session.posargs else []
    for path in _bundles(session):
        session.run(tool, "install", path, *home, *session.posargs[1:], external=True)


@nox.session(python=False)
def publish(session: nox.Session) -> None:
    """Publish dist/ (gated: skipped with a line saying why unless both variables are set)."""
    session.run(_tool(session), "publish", str(DIST), "--workspace", str(ROOT),
                *session.posargs, external=True)
