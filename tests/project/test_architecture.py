"""The shape docs/architecture.md promises: what a command loads, and the size of the rooms.

The import-layer contracts themselves are checked by `nox -s lint` (import-linter); these
tests pin what a user can observe: a plain `verify` runs no program and loads no builder,
cargo runner, library loader or doctor, nor sigstore, cyclonedx or oras; `--version` loads
nothing heavy at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BuiltExample
from tests.helpers import REPO, cli

pytestmark = pytest.mark.process

PACKAGE = REPO / "tooling" / "horon_bundle"
HEAVY = ("sigstore", "cyclonedx", "oras", "requests", "cryptography")
STAGES = ("horon_bundle.cargo", "horon_bundle.build", "horon_bundle.doctor",
          "horon_bundle.load", "horon_bundle.sign", "horon_bundle.publish",
          "horon_bundle.reproduce", "horon_bundle.assets")
# issue 24's start-up savings, each held by the commands that no longer load it (not by time):
# the signer's models and signature checks only when a signer is named; importlib.resources
# (tempfile, shutil, zipfile) neither for the trust root's name nor for the shipped host
# profiles; shutil (bz2, lzma) not for argparse's formatter width; orjson not for a small
# document's digest; difflib only for a "did you mean"
SIGNER = ("horon_bundle.verify.signature", "horon_bundle.model.signer_identity")
UNNEEDED = ("importlib.resources", "shutil", "orjson", "difflib")
# what a native bundle's verify needs of the harness side: its layout's names, its options
HARNESS_ONLY = ("horon_bundle.verify.harness.report", "horon_bundle.verify.harness.ref",
                "horon_bundle.verify.harness.judge", "horon_bundle.model.harness.ref",
                "horon_bundle.model.harness.manifest", "horon_bundle.model.harness.catalogue")
# the native models a harness verify never reads
NATIVE_MODELS = ("horon_bundle.model.provenance", "horon_bundle.model.manifest",
                 "horon_bundle.model.graph", "horon_bundle.model.evidence",
                 "horon_bundle.model.record", "horon_bundle.model.qa")
# the modules our code loads: those present before it runs (the interpreter's, and under
# `nox -s tests` coverage's own, which imports typing in every child) are not counted
_OBSERVE = """
import json, sys
before = set(sys.modules)
events = []
def hook(event, args):
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system",
                 "os.spawn", "ctypes.dlopen"):
        events.append(event)
sys.addaudithook(hook)
from horon_bundle.cli.main import main
status = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\n@@" + json.dumps({"status": status, "events": events,
                                        "modules": sorted(set(sys.modules) - before)}) + "\\n")
"""


def _observe(*args: str | Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _OBSERVE, *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)
    marker = done.stderr.rsplit("\n@@", 1)
    assert len(marker) == 2, done.stderr
    result: dict[str, object] = json.loads(marker[1])
    return result


def _loaded(modules: object, prefixes: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.slow
def test_plain_verify_runs_nothing_and_loads_no_stage(example_release: BuiltExample) -> None:
    for bundle in (example_release.bundle, example_release.archive):
        seen = _observe("verify", bundle)
        assert seen["status"] == 0
        assert seen["events"] == [], "verify started a process or loaded a library"
        modules = seen["modules"]
        assert _loaded(modules, STAGES) == []
        assert _loaded(modules, HEAVY) == []
        assert _loaded(modules, ("rich",)) == [], "off a terminal, output needs no rich"
        # a native bundle without --policy/--host needs no policy rules, no harness judge, no yaml
        assert _loaded(modules, ("yaml", "horon_bundle.rules.policy",
                                 "horon_bundle.rules.policy_requirements",
                                 "horon_bundle.verify.harness.judge",
                                 "horon_bundle.model.harness.profile")) == []
        assert isinstance(modules, list)
        assert not [m for m in modules if m.startswith("horon_bundle")
                    and any(word in m for word in ("probe", "cargo_", "doctor_"))]
        assert _loaded(modules, (*SIGNER, *UNNEEDED, *HARNESS_ONLY, "horon_bundle.verify.trust",
                                 "horon_bundle.model.record")) == []
        # each reader only for its own kind of bundle
        other = (("horon_bundle.verify.reading.directory", "horon_bundle.core.tree")
                 if bundle == example_release.archive else ())
        assert _loaded(modules, other) == []


@pytest.mark.slow
def test_version_and_help_load_nothing_heavy() -> None:
    version = _observe("--version")
    assert version["status"] == 0
    assert _loaded(version["modules"], (*HEAVY, "rich", "argparse", "typing")) == []
    assert _loaded(version["modules"], ("horon_bundle.cli.cmd_build", "horon_bundle.verify")) == []
    done = subprocess.run([sys.executable, "-c", _OBSERVE, "--help"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and "verify" in done.stdout
    for command in ("verify", "build", "publish"):
        helped = subprocess.run([sys.executable, "-c",
                                 "import sys; from horon_bundle.cli.main import main\n"
                                 "try:\n    main([sys.argv[1], '--help'])\n"
                                 "except SystemExit:\n    pass\n"
                                 "print(sorted(sys.modules))", command],
                                capture_output=True, text=True, timeout=120, check=False)
        assert helped.returncode == 0, helped.stderr
        for heavy in HEAVY:
            assert f"'{heavy}'" not in helped.stdout and f"'{heavy}." not in helped.stdout


def test_rooms_stay_small() -> None:
    """No module over 400 lines but the declarative code registry; at most four modules
    directly in the package besides __init__ and __main__."""
    top = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(top) <= 4, top
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
            and p.name != "codes.py"}
    assert long == {}


NATIVE_JUDGE = ("horon_bundle.verify.judge", "horon_bundle.verify.native_context",
                "horon_bundle.verify.claims", "horon_bundle.verify.advertised",
                "horon_bundle.abi", "horon_bundle.rules.features_and_qa")


@pytest.mark.slow
def test_list_and_a_harness_verify_load_only_what_they_need(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """Start-up a host pays per call: `list` of a home reads its state file and never loads
    the verifier (nor a copy's verifier, hashing, or a harness bundle's hook and server
    models: the state file keeps a catalogue as a document; nor typing: its modules import
    it for annotations alone); a harness verify and fetch
    never load the native judge, its models or any stage."""
    from tests.harness_support import built_zip  # noqa: PLC0415

    archive = built_zip(tmp_path / "harness")
    ref = archive.with_name(archive.name + ".ref.json")
    home = tmp_path / "home"
    for bundle in (archive, example_release.bundle):  # a home holding both kinds
        assert cli("install", bundle, "--home", home).status == 0
    for listed_home in (tmp_path / "no-home", home):
        listed = _observe("list", "--home", listed_home)
        assert listed["status"] == 0
        assert _loaded(listed["modules"], ("horon_bundle.verify", *STAGES, *HEAVY, "rich")) == []
        assert _loaded(listed["modules"], (
            "horon_bundle.install.copies", "horon_bundle.core.hashing",
            "horon_bundle.model.manifest", "horon_bundle.model.harness.hooks",
            "horon_bundle.model.harness.mcp", "horon_bundle.model.harness.ref",
            "horon_bundle.model.harness.manifest", "horon_bundle.model.harness.catalogue",
            "horon_bundle.model.harness.host_names", "horon_bundle.core.checkpoint",
            "secrets", "datetime", "platform", "typing", *UNNEEDED)) == [], listed_home
    for argv in (("verify", archive), ("fetch", ref, "--into", tmp_path / "fetched")):
        seen = _observe(*argv)
        assert seen["status"] == 0, argv
        # no process (fetch calls libc's renameat2 through ctypes: not a program)
        events = seen["events"]
        assert isinstance(events, list)
        assert [e for e in events if e != "ctypes.dlopen"] == [], argv
        assert _loaded(seen["modules"], (*NATIVE_JUDGE, *STAGES, *HEAVY, *SIGNER)) == [], argv
        assert _loaded(seen["modules"], (
            "horon_bundle.model.provenance", "horon_bundle.model.graph",
            "horon_bundle.model.evidence", "horon_bundle.model.record")) == [], argv
    verified = _observe("verify", archive)
    assert _loaded(verified["modules"], (*NATIVE_MODELS, *UNNEEDED)) == []
