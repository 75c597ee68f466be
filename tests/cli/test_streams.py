"""Where every line goes, for every command and both bundle kinds: the result (the verdict, the
list, the report) on stdout; progress, notes, the `ERROR code:` / `WARNING code:` lines and
their hints on stderr; under `--json` exactly one JSON document on stdout and nothing else —
and that document, like every file the commands wrote, valid against its schema in
docs/schemas/ (tests/schema_registry.py: a document with no schema fails).

One table (`_rows`): a row per command and kind, run in order against one world (a native
bundle, a harness zip and its ref, an agent home, a file store), in-process, with stdout and
stderr captured apart. A command missing from the table fails the test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.cli.main import COMMANDS
from tests.conftest import BuiltExample, Compiled
from tests.harness_support import PLUGIN_NAME, PLUGIN_VERSION, built_marketplace, write_plugin
from tests.helpers import REPO, TEMPLATE, CliResult, cli
from tests.publish_support import make_dist, publish_env
from tests.schema_registry import BY_FORMAT, validate

# what a line of stderr may be: progress, a note, a refusal or warning with what the tool
# said and the hint, an annotation, argparse's usage, `new`'s next steps
DIAGNOSTIC = ("ERROR ", "WARNING ", "INTERNAL ERROR", "  hint:", "  │", "• ", "note:",
              "  note:", "warning:", "::", "usage:", "next:", "  cd ", "  git ",
              "  horon-bundle ", "  HORON_PUBLISH_ENABLED=", "  (horon-bundle docs ")


@dataclass(frozen=True)
class Row:
    """One command run twice: as a person reads it, and with --json (when it has one)."""

    name: str  # "command kind"
    args: tuple[str | Path, ...]
    shows: str | None  # a word of the result that must be on stdout (None: stdout stays empty)
    refused: bool = False  # a refusal: exit status not 0, codes on stderr
    json: bool = True
    env: tuple[tuple[str, str], ...] = ()
    second: tuple[str | Path, ...] | None = None  # the --json run's own arguments


@dataclass(frozen=True)
class World:
    root: Path
    native: BuiltExample
    compiled: Compiled
    plugin: Path  # a harness plugin directory
    harness_zip: Path
    harness_ref: Path
    home: Path
    store: Path
    log_key: Path  # a signer key file: the table's publish keeps the store's log
    verifier: str  # its verifier key, as `log keygen` prints it
    statement: Path  # the release statement the harness build wrote


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, example_release: BuiltExample,
          compiled_example: Compiled) -> World:
    root = tmp_path_factory.mktemp("streams")
    plugin = write_plugin(root / "plugin")
    built = cli("build", plugin, "--out", root / "harness-out")
    assert built.status == 0, built.stderr
    [harness_zip] = (root / "harness-out").glob("*.zip")
    (root / "store").mkdir()
    built_marketplace(root / "market")  # its zips, refs and index are validated with the rest
    made = cli("log", "keygen", "streams-log", "--out", root / "log.key")
    assert made.status == 0, made.stderr
    [statement] = (root / "harness-out").glob("*.intoto.jsonl")
    return World(root=root, native=example_release, compiled=compiled_example, plugin=plugin,
                 harness_zip=harness_zip, harness_ref=harness_zip.with_name(
                     harness_zip.name + ".ref.json"),
                 home=root / "home", store=root / "store", log_key=root / "log.key",
                 verifier=made.stdout.strip(), statement=statement)


def _rows(w: World) -> Iterator[Row]:
    home = ("--home", w.home)
    native, harness = w.native, w.harness_zip
    gate = (*publish_env(w.store.as_uri()).items(), ("HORON_PUBLISH_LOG_KEY", str(w.log_key)))
    dist = make_dist(w.root / "dist", native.archive, harness)
    yield Row("new native", ("new", "acme-notes", "--no-git", "--dir", w.root / "new1"),
              "created", second=("new", "acme-notes", "--no-git", "--dir", w.root / "new2"))
    yield Row("build native", ("build", TEMPLATE, "--out", w.root / "b1", "--prebuilt",
                               w.compiled.library, "--record", w.compiled.record), "archive",
              second=("build", TEMPLATE, "--out", w.root / "b2", "--prebuilt",
                      w.compiled.library, "--record", w.compiled.record))
    yield Row("build harness", ("build", w.plugin, "--out", w.root / "h1"), "harness zip",
              second=("build", w.plugin, "--out", w.root / "h2"))
    yield Row("compile native", ("compile", w.root / "no-workspace"), None, refused=True)
    yield Row("verify native", ("verify", native.archive), "verified")
    yield Row("verify harness", ("verify", harness), "verified")
    yield Row("doctor native", ("doctor", native.bundle), "conformant")
    yield Row("doctor harness", ("doctor", harness), "refused", refused=True)
    yield Row("inspect native", ("inspect", native.archive), "verified")
    yield Row("inspect harness", ("inspect", harness), "refused", refused=True)
    yield Row("reproduce native", ("reproduce", w.root / "absent.zip"), None, refused=True)
    yield Row("sign native", ("sign", native.archive), None, refused=True)
    yield Row("publish closed", ("publish", dist), "publish skipped")
    yield Row("publish native+harness", ("publish", dist), "published", env=gate)
    yield Row("yank native", ("yank", "example", "0.1.0", "--reason", "a test"), "yanked",
              env=gate)
    yield Row("log keygen", ("log", "keygen", "other-log", "--out", w.root / "k1.key"),
              "other-log+", second=("log", "keygen", "other-log", "--out", w.root / "k2.key"))
    yield Row("log verify", ("log", "verify", w.store, "--key", w.verifier), "streams-log")
    yield Row("statement merge", ("statement", "merge", w.statement, "--out",
                                  w.root / "m1.intoto.jsonl"), "m1.intoto.jsonl",
              second=("statement", "merge", w.statement, "--out", w.root / "m2.intoto.jsonl"))
    yield Row("install native", ("install", native.archive, *home), "installed")
    yield Row("install harness", ("install", harness, *home), "installed")
    yield Row("list both", ("list", *home), f"{PLUGIN_NAME} {PLUGIN_VERSION}")
    yield Row("list catalogue", ("list", "--catalogue", *home), "skill release-notes")
    yield Row("status both", ("status", "--verify", *home), "verified")
    yield Row("enable native", ("enable", "example", *home), "enabled")
    yield Row("check native", ("check", "example", *home), "verifies as installed")
    yield Row("check both", ("check", "example", PLUGIN_NAME, *home), "2 of 2 verified")
    yield Row("disable native", ("disable", "example", *home), "disabled")
    yield Row("check harness", ("check", PLUGIN_NAME, *home), "verifies as installed")
    yield Row("fetch harness", ("fetch", w.harness_ref, "--zip", harness, "--into",
                                w.root / "f1"), "fetched",
              second=("fetch", w.harness_ref, "--zip", harness, "--into", w.root / "f2"))
    yield Row("uninstall native", ("uninstall", "example", "0.1.0", *home), "uninstalled",
              json=False)
    yield Row("uninstall harness", ("uninstall", PLUGIN_NAME, PLUGIN_VERSION, *home),
              "uninstalled", json=False)
    yield Row("codes", ("codes",), "publish.switch-value")
    yield Row("profiles", ("profiles",), "claude-code@")
    yield Row("completion bash", ("completion", "bash"), "_shtab_horon_bundle", json=False)
    yield Row("docs topics", ("docs",), "getting-started", json=False)
    yield Row("docs page", ("docs", "getting-started"), "horon-bundle", json=False)


def _human(row: Row, result: CliResult) -> None:
    for line in result.stdout.splitlines():
        assert not line.startswith(DIAGNOSTIC), f"{row.name}: a diagnostic on stdout: {line!r}"
    for line in result.stderr.splitlines():
        assert line.startswith(DIAGNOSTIC) or (line.startswith(" ") and result.status == 2), \
            f"{row.name}: a result on stderr: {line!r}"
    if row.refused:
        assert result.status != 0 and result.codes, f"{row.name}: expected a refusal"
    else:
        assert result.status == 0, (row.name, result.stderr)
    if row.shows is None:
        assert result.stdout == "", f"{row.name}: no result expected on stdout"
    else:
        assert row.shows in result.stdout, (row.name, result.stdout)


def _as_json(row: Row, result: CliResult) -> Any:
    """Exactly one document on stdout (json.loads refuses anything after it)."""
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{row.name} --json: not one document on stdout: "
                             f"{result.stdout[:300]!r}") from exc


def test_every_command_puts_results_on_stdout_and_diagnostics_on_stderr(world: World) -> None:
    rows = list(_rows(world))
    validated: set[str] = set()
    assert {row.name.split()[0] for row in rows} == set(COMMANDS), "a command has no row"
    for row in rows:
        env = dict(row.env)
        _human(row, cli(*row.args, env=env))
        if row.json:
            args = row.second if row.second is not None else row.args
            document = _as_json(row, cli(*args, "--json", env=env))
            validated.add(validate(document))
    validated |= _files_validate(world)
    unchecked = set(BY_FORMAT.values()) - validated - NOT_PRODUCED_HERE
    assert not unchecked, f"schemas no real document was checked against: {unchecked}"
    shutil.rmtree(world.home)


# what this table cannot produce (each validated where it is produced)
NOT_PRODUCED_HERE = {
    "sign-result.schema.json",  # needs a CI OIDC identity; the table's row is its refusal
    "reproduce-report.schema.json",  # a rebuild from source: tests/reproduce/test_reproduce.py
    "artifact-record.schema.json",  # tests/model/test_schemas.py (compile's record)
    "plugin.schema.json",  # tests/model/test_schemas.py
    "compile-result.schema.json",  # tests/model/test_schemas.py (the session's compile)
}


def _files_validate(w: World) -> set[str]:
    """Every JSON file the table's commands wrote, against its schema."""
    names = set()
    for path in sorted(w.root.rglob("*.intoto.jsonl")):  # a release statement: each line
        for line in path.read_text().splitlines():
            names.add(validate(json.loads(line)))
    for path in sorted(w.root.rglob("*.json")):
        if path.name.endswith(".cdx.json"):
            continue  # a CycloneDX SBOM: its own validators (tests/assets, tests/build)
        relative = path.relative_to(w.root).as_posix()
        if relative.startswith(("plugin/", "market/market/", "new", "f1/", "f2/")) and \
                path.name != "catalogue.json":
            continue  # the plugin's own sources, scaffolds, unpacked plugin files
        if path.parent.name == "lib" or ("/example-0.1.0-" in f"/{relative}" and \
                not relative.endswith((".build.json", ".ref.json"))):
            continue  # inside a native bundle: plugin.json, provenance, sbom (their own tests)
        document = json.loads(path.read_text())
        names.add(validate(document, "harness-ref" if path.name.endswith(".ref.json") else None))
    for profile in sorted((REPO / "tooling" / "horon_bundle" / "model" / "harness" /
                           "profiles").glob("*.json")):
        names.add(validate(json.loads(profile.read_text())))
    return names


def test_codes_pipe_into_grep() -> None:
    """`horon-bundle codes | grep -c .`: one line per code, on stdout."""
    listed = cli("codes")
    assert listed.status == 0 and listed.stderr == ""
    assert len(listed.stdout.splitlines()) > 100
    assert any(line.startswith("publish.switch-value ") for line in listed.stdout.splitlines())


def test_a_refusal_under_json_is_the_document_alone(tmp_path: Path) -> None:
    refused = cli("verify", tmp_path / "absent.zip", "--json")
    assert refused.status == 1
    assert json.loads(refused.stdout)["ok"] is False
    assert refused.codes == ["input.unreadable"]  # the ERROR line, on stderr


def test_under_json_the_human_result_moves_to_stderr(example_release: BuiltExample) -> None:
    plain = cli("verify", example_release.archive)
    as_json = cli("verify", example_release.archive, "--json")
    assert plain.stdout.rstrip().endswith("verified") and plain.stderr == ""
    assert as_json.stderr == plain.stdout  # the same lines, out of the document's way
    assert json.loads(as_json.stdout)["ok"] is True

