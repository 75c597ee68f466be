"""The names of an agent home and where the home is when none is named.

    <home>/                      0700, created on first write (its parent must exist)
      install.lock               empty; every writer holds flock(LOCK_EX) on it
      state.json                 horon.agent-home.v1, replaced atomically
      native-plugins/<id>/<version>/<target>/   one installed bundle, never rewritten
      native-plugins/.staging-*  an install in progress (or killed: removed by the next writer)
      native-plugins/.trash-*    an uninstall in progress (idem)
      harness-bundles/sha256/<hex>.zip   one harness zip under its SHA-256, 0444, written once
      harness-bundles/.staging-* an install of a harness zip in progress (idem)
      .state.json.*.tmp          a state write in progress (idem)
      log-checkpoints/<sha256>   the largest checkpoint seen of each store's log (--log;
                                 install/log_memory.py)

The default home is `$HORON_AGENT_HOME`, else `$XDG_DATA_HOME/horon-agent`, else
`~/.local/share/horon-agent`: installed plugins are user data in the XDG Base Directory
sense (not configuration, not cache), and one rule for every POSIX system keeps tests and
hosts agreeing on the place.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Refused

NATIVE_DIR = "native-plugins"
HARNESS_DIR = "harness-bundles"
DIGEST_DIR = "sha256"
STORED_SUFFIX = ".zip"
STORED_MODE = 0o444
STATE_NAME = "state.json"
LOCK_NAME = "install.lock"
STAGING_PREFIX = ".staging-"
TRASH_PREFIX = ".trash-"
STATE_TEMP_PREFIX = f".{STATE_NAME}."
STATE_TEMP_SUFFIX = ".tmp"
HOME_VARIABLE = "HORON_AGENT_HOME"
HOME_DIR_NAME = "horon-agent"


def default_home(environ: Mapping[str, str]) -> tuple[Path, bool]:
    """The home when --home is not given, and whether missing parents may be created (only
    for the XDG default, as the XDG spec asks; a named home's parent must exist)."""
    named = environ.get(HOME_VARIABLE)
    if named is not None:
        if not named or not Path(named).is_absolute():
            raise Refused.one(codes.ENVIRONMENT_VALUE,
                              f"{HOME_VARIABLE}={named!r}: not an absolute path")
        return Path(named), False
    data = environ.get("XDG_DATA_HOME", "")
    if data and Path(data).is_absolute():  # a relative value is ignored, as the spec says
        return Path(data) / HOME_DIR_NAME, True
    user_home = environ.get("HOME", "")
    if not user_home or not Path(user_home).is_absolute():
        raise Refused.one(codes.ENVIRONMENT_VALUE,
                          "no agent home: pass --home, or set HORON_AGENT_HOME or HOME")
    return Path(user_home) / ".local" / "share" / HOME_DIR_NAME, True


def resolve_home(given: Path | None, environ: Mapping[str, str]) -> tuple[Path, bool]:
    if given is not None:
        return Path.cwd() / given if not given.is_absolute() else given, False
    return default_home(environ)


def check_id(plugin_id: str) -> str:
    if not identifiers.PLUGIN_ID.fullmatch(plugin_id):
        raise Refused.one(codes.INSTALL_NAME, f"plugin id {plugin_id!r} does not match "
                                              "^[a-z][a-z0-9-]{1,62}$")
    return plugin_id


def check_version(version: str) -> str:
    if not identifiers.SEMVER.fullmatch(version):
        raise Refused.one(codes.INSTALL_NAME, f"version {version!r} is not a semantic version")
    return version


def check_target(target: str) -> str:
    problem = identifiers.target_problem(target)
    if problem is not None:  # the triple grammar admits no "/" and no leading "."
        raise Refused.one(codes.INSTALL_NAME, f"target: {problem}")
    return target


def stored_name(sha256: str) -> str:
    """The file name of a harness zip in harness-bundles/sha256/."""
    return sha256 + STORED_SUFFIX


def stored_where(sha256: str) -> str:
    return relative(HARNESS_DIR, DIGEST_DIR, stored_name(sha256))


def relative(*parts: str) -> str:
    """A home-relative path for messages, e.g. native-plugins/example/0.1.0."""
    return "/".join(parts)
