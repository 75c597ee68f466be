"""The names Claude Code keeps for itself (model/harness/host_names.py), and the pinned host
agreeing: every marketplace name below is put to `claude plugin marketplace add` (which judges
marketplace names; `plugin validate` does not) and every plugin name to `claude plugin
validate`, and the host's verdict must be the rule's."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from horon_bundle.model.harness.host_names import marketplace_name_problem, plugin_name_problem
from tests.claude_host import ClaudeHost

NO_NETWORK = ["unshare", "--user", "--map-root-user", "--net", "--"]  # the host reaches nothing
ZERO = "0" * 64

# name -> refused by Claude Code (one case per branch of the rule)
MARKETPLACE_NAMES = {
    "team-tools": False, "claude-tools": False, "anthropic-x": False, "my-claude-kit": False,
    "claude-code-plugins": True, "Claude-Plugins-Official": True, "healthcare": True,
    "claude-marketplace": True, "claude_plugins-x": True, "claudeplugins": True,
    "claude-plu-gins": True, "xanthropic-official": True, "my.official.claude": True,
    "inline": True, "Skills-Dir": True, "t\u00ebam-tools": True,
}
# one name per branch of the marketplace rule is put to the host (a `marketplace add` costs
# about half a second: the in-process table above has more)
ASKED = ("claude-tools", "Claude-Plugins-Official", "inline", "claude-marketplace",
         "claude-plu-gins", "my.official.claude", "t\u00ebam-tools")
PLUGIN_NAMES = {
    "guard-kit": False, "claudex": False, "my-claude": False, "official-kit": False,
    "claude": True, "Claude-Code": True, "claude-guard": True, "anthropics.tools": True,
    "cc-plugin-x": True, "claude_mods": True, "x-official-claude": True,
    "anthropicofficial": True,
}


def _marketplace(directory: Path, name: str, plugins: list[str]) -> Path:
    (directory / ".claude-plugin").mkdir(parents=True)
    (directory / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": name, "owner": {"name": "Team"}, "description": "names",
        "plugins": [{"name": plugin, "version": "1.0.0", "source": {
            "source": "archive", "url": f"https://plugins.example/{index}.zip", "sha256": ZERO}}
            for index, plugin in enumerate(plugins)]}))
    return directory


@pytest.mark.parametrize("name", list(MARKETPLACE_NAMES))
def test_marketplace_names(name: str) -> None:
    assert (marketplace_name_problem(name) is not None) == MARKETPLACE_NAMES[name]


@pytest.mark.parametrize("name", list(PLUGIN_NAMES))
def test_plugin_names(name: str) -> None:
    assert (plugin_name_problem(name) is not None) == PLUGIN_NAMES[name]


def test_a_name_outside_printable_ascii_is_refused_for_a_plugin_too() -> None:
    problem = plugin_name_problem("cl\u0430ude-kit")  # a Cyrillic a: the host folds it
    assert problem is not None and "ASCII" in problem


@pytest.mark.process
@pytest.mark.slow
def test_the_pinned_host_refuses_exactly_these_marketplace_names(
        tmp_path: Path, claude_host: ClaudeHost) -> None:
    def added(case: tuple[int, str]) -> bool:
        index, name = case
        market = _marketplace(tmp_path / f"m{index}", name, ["guard-kit"])
        ran = claude_host.run("plugin", "marketplace", "add", market.resolve(),
                              home=tmp_path / f"home{index}", prefix=NO_NETWORK)
        if ran.status != 0:
            assert "reserved" in ran.stderr or "impersonates" in ran.stderr, ran.stderr
        return ran.status == 0

    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = dict(zip(ASKED, pool.map(added, enumerate(ASKED)), strict=True))
    assert {name: not ok for name, ok in verdicts.items()} == {
        name: MARKETPLACE_NAMES[name] for name in ASKED}


@pytest.mark.process
def test_the_pinned_host_refuses_exactly_these_plugin_names(
        tmp_path: Path, claude_host: ClaudeHost) -> None:
    names = list(PLUGIN_NAMES)
    market = _marketplace(tmp_path / "market", "team-tools", names)
    ran = claude_host.run("plugin", "validate", market.resolve(), "--json",
                          home=tmp_path / "home", prefix=NO_NETWORK)
    report = ran.json()
    assert isinstance(report, dict)
    refused = {names[int(found.group(1))]
               for error in report["manifest"]["errors"]
               if (found := re.fullmatch(r"plugins\[(\d+)\]\.name", error["path"]))}
    assert {name: name in refused for name in names} == PLUGIN_NAMES
    assert ran.status == 1
