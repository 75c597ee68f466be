"""horon-release.toml is read strictly; each fault refused with its code, nothing built."""

from __future__ import annotations

from pathlib import Path

import pytest

from horon_bundle.core import codes, hashing
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value
from horon_bundle.model import declaration as decl
from tests.helpers import TEMPLATE, assert_refused, cli, copy_workspace, tree_snapshot

GOOD = (TEMPLATE / "horon-release.toml").read_text()

FAULTS: dict[str, tuple[str, str]] = {
    "unknown top-level key": (GOOD + "\nextra = 1\n", "declaration.unknown-key"),
    "unknown plugin key": (GOOD.replace('profile = "release"', 'profile = "release"\nfoo = 1'),
                           "declaration.unknown-key"),
    "destination configured": (GOOD.replace('"unconfigured"', '"oci://ghcr.io/acme"'),
                               "declaration.destination"),
    "missing id": (GOOD.replace('id = "example"\n', ""), "declaration.missing-key"),
    "bad id": (GOOD.replace('id = "example"', 'id = "Example!"'), "declaration.value"),
    "wrong type": (GOOD.replace("schema = 1", 'schema = "1"'), "declaration.type"),
    "bool for int": (GOOD.replace("schema = 1", "schema = true"), "declaration.type"),
    "unknown schema": (GOOD.replace("schema = 1", "schema = 2"), "declaration.value"),
    "32-bit target": (GOOD.replace('targets = [', 'targets = ["i686-pc-windows-msvc", '),
                      "declaration.value"),
    "bad feature token": (GOOD.replace('features = ["clock", "greeting"]',
                                       'features = ["Clock"]'), "declaration.value"),
    "licence path escapes": (GOOD.replace('license-file = "LICENSE"',
                                          'license-file = "../LICENSE"'), "declaration.value"),
    "not TOML": ("schema = = 1\n", "declaration.syntax"),
    "no plugin": ("schema = 1\n", "declaration.missing-key"),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_declaration_fault_refused(case: str, tmp_path: Path) -> None:
    text, code = FAULTS[case]
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    (workspace / "horon-release.toml").write_text(text)
    out = tmp_path / "dist"
    before = tree_snapshot(workspace)
    assert_refused(cli("build", workspace, "--out", out), code)
    assert tree_snapshot(out) == {}
    assert tree_snapshot(workspace) == before


def test_missing_declaration(tmp_path: Path) -> None:
    assert_refused(cli("build", tmp_path, "--out", tmp_path / "dist"), "declaration.missing")


def test_unknown_plugin(tmp_path: Path) -> None:
    result = cli("build", TEMPLATE, "--plugin", "nope", "--out", tmp_path / "dist")
    assert_refused(result, "declaration.plugin")


def test_usage_error_exits_2() -> None:
    result = cli("build", "--channel", "beta")
    assert result.status == 2
    assert "Traceback" not in result.stderr


# --- the reader itself, called in-process: parsed values and every finding, exactly -------

HEAD = 'schema = 1\n\n[publish]\ndestination = "unconfigured"\n'
PLUGIN = """
[[plugin]]
id = "example"
name = "Example"
package = "horon-example"
features = ["greeting", "clock"]
targets = ["x86_64-unknown-linux-gnu"]
profile = "release"
license-file = "LICENSE"
"""
FULL = (HEAD + '\n[qa]\nproviders = ["acme-test-*", "QA"]\n' + PLUGIN
        + 'qa-features = ["qa-provider", "qa-extra"]\n'
        + '\n[[plugin.sidecar]]\nname = "mail-helper"\nsource = "helpers/mail-helper"\n'
        + 'executable = true\n'
        + '\n[[plugin.sidecar]]\nname = "data-file"\nsource = "helpers/data.bin"\n'
        + PLUGIN.replace('"example"', '"other"').replace('"Example"', '"Other"')
        .replace('"horon-example"', '"horon_other"').replace('"release"', '"dist"')
        .replace('"LICENSE"', '"docs/COPYING"')
        .replace('["x86_64-unknown-linux-gnu"]',
                 '["x86_64-pc-windows-msvc", "aarch64-apple-darwin"]'))

Row = tuple[str, str, str, int | None]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / decl.DECLARATION_NAME
    path.write_text(text)
    return path


def _refusal(tmp_path: Path, text: str) -> list[Row]:
    """Every finding of a refused declaration: (code, message, hint, line); each is placed in
    the declaration's file."""
    path = _write(tmp_path, text)
    with pytest.raises(Refused) as caught:
        decl.load_declaration(tmp_path)
    assert [f.file for f in caught.value.findings] == [str(path)] * len(caught.value.findings)
    return [(f.code.name, f.message, f.hint, f.line) for f in caught.value.findings]


def test_declaration_parsed_in_full(tmp_path: Path) -> None:
    path = _write(tmp_path, FULL)
    parsed = decl.load_declaration(tmp_path)
    assert parsed == decl.Declaration(
        path=path, digest=hashing.hash_bytes(FULL.encode()),
        qa_patterns=("qa", "qa-*", "*-qa", "*-qa-*", "acme-test-*"),
        plugins=(
            decl.PluginDeclaration(
                id="example", name="Example", package="horon-example",
                features=("clock", "greeting"), qa_features=("qa-extra", "qa-provider"),
                targets=("x86_64-unknown-linux-gnu",), profile="release",
                license_file="LICENSE",
                sidecars=(decl.SidecarDeclaration(name="mail-helper",
                                                  source="helpers/mail-helper",
                                                  executable=True),
                          decl.SidecarDeclaration(name="data-file", source="helpers/data.bin",
                                                  executable=False))),
            decl.PluginDeclaration(
                id="other", name="Other", package="horon_other",
                features=("clock", "greeting"), qa_features=(),
                targets=("x86_64-pc-windows-msvc", "aarch64-apple-darwin"), profile="dist",
                license_file="docs/COPYING", sidecars=()),
        ))
    assert parsed.workspace == tmp_path
    assert parsed.plugin("other") is parsed.plugins[1]
    assert parsed.plugin("example") is parsed.plugins[0]
    with pytest.raises(Refused) as caught:
        parsed.plugin(None)
    assert caught.value.codes() == ["declaration.plugin"]
    assert "declares several plugins (example, other)" in caught.value.findings[0].message


def test_single_plugin_chosen_without_plugin_option(tmp_path: Path) -> None:
    _write(tmp_path, HEAD + PLUGIN)
    parsed = decl.load_declaration(tmp_path)
    assert parsed.plugin(None) is parsed.plugins[0]
    assert parsed.plugin(None).id == "example"
    assert parsed.qa_patterns == ("qa", "qa-*", "*-qa", "*-qa-*")


def test_claim_adds_qa_features_for_qa_only(tmp_path: Path) -> None:
    _write(tmp_path, FULL)
    example, other = decl.load_declaration(tmp_path).plugins
    assert example.claim("release") == ("clock", "greeting")
    assert example.claim("qa") == ("clock", "greeting", "qa-extra", "qa-provider")
    assert other.claim("qa") == ("clock", "greeting")


def test_find_workspace_walks_up(tmp_path: Path) -> None:
    _write(tmp_path, HEAD + PLUGIN)
    inner = tmp_path / "src" / "deep"
    inner.mkdir(parents=True)
    assert decl.find_workspace(inner) == tmp_path.resolve()
    assert decl.find_workspace(tmp_path) == tmp_path.resolve()


def test_find_workspace_refuses_without_declaration(tmp_path: Path) -> None:
    with pytest.raises(Refused) as caught:
        decl.find_workspace(tmp_path)
    assert caught.value.codes() == ["declaration.missing"]
    (finding,) = caught.value.findings
    assert finding.file == str(tmp_path.resolve())
    assert str(tmp_path.resolve()) in finding.message


def _v(where: str, message: str, line: int | None, code: str = "declaration.value",
       hint: str = "") -> Row:
    return (code, f"horon-release.toml: {where}: {message}", hint, line)


def _t(where: str, message: str, line: int | None) -> Row:
    return _v(where, message, line, "declaration.type")


SIDECAR = '\n[[plugin.sidecar]]\nname = "{}"\nsource = "{}"\n'
READER_FAULTS: dict[str, tuple[str, list[Row]]] = {
    "values named": (
        HEAD + PLUGIN.replace('"example"', '"Ex!"').replace('"Example"', '" Ex"')
        .replace('"horon-example"', '"a b"').replace('"release"', '"Rel"')
        .replace('"LICENSE"', '"../L"'),
        [_v("plugin[0].id", "'Ex!' does not match [a-z][a-z0-9-]{1,62}", 7),
         _v("plugin[0].name", "' Ex': leading or trailing whitespace", 8),
         _v("plugin[0].package", "'a b' is not a cargo package name", 9),
         _v("plugin[0].profile", "'Rel' is not a cargo profile name", 12),
         _v("plugin[0].license-file", "'../L': '..' component", 13)]),
    "features": (
        HEAD + PLUGIN.replace('["greeting", "clock"]', '["Clock", "ab", "ab"]')
        + 'qa-features = ["q", "q", "Q"]\n',
        [_v("plugin[0].features", "'Clock' is not a feature token", 10),
         _v("plugin[0].features", "a feature is listed twice", 10),
         _v("plugin[0].qa-features", "'Q' is not a feature token", 14),
         _v("plugin[0].qa-features", "a feature is listed twice", 14)]),
    "element types": (
        HEAD + PLUGIN.replace('["greeting", "clock"]', '["ab", 1]')
        .replace('["x86_64-unknown-linux-gnu"]', '[2]') + 'qa-features = [3]\n',
        [_t("plugin[0].features[1]", "expected a string, got 1", 10),
         _t("plugin[0].qa-features[0]", "expected a string, got 3", 14),
         _t("plugin[0].targets[0]", "expected a string, got 2", 11)]),
    "targets": (
        HEAD + PLUGIN.replace('["x86_64-unknown-linux-gnu"]',
                              '["i686-pc-windows-msvc", "x86_64-unknown-linux-gnu", '
                              '"x86_64-unknown-linux-gnu"]'),
        [_v("plugin[0].targets",
            "'i686-pc-windows-msvc' is not a 64-bit target (ABI v1 is 64-bit only)", 11),
         _v("plugin[0].targets", "a target is listed twice", 11)]),
    "no target": (
        HEAD + PLUGIN.replace('["x86_64-unknown-linux-gnu"]', "[]"),
        [_v("plugin[0].targets", "no target declared", 11)]),
    "sidecar faults, all reported": (
        HEAD + PLUGIN + 'sidecar = [1, {name = "Bad!", source = "h/a"}, '
        '{name = "ok-name", source = "../x", extra = 1}, '
        '{name = "ok-name", source = "h/c", executable = "yes"}]\n',
        [_t("plugin[0].sidecar[0]", "expected an object, got 1", 14),
         _v("plugin[0].sidecar[1].name", "'Bad!' is not a sidecar name", 14),
         _v("plugin[0].sidecar[2].extra", "unknown key", 14, "declaration.unknown-key",
            "Known keys here: executable, name, source."),
         _v("plugin[0].sidecar[2].source", "'../x': '..' component", 14),
         _t("plugin[0].sidecar[3].executable", "expected a boolean, got 'yes'", 14)]),
    "bad sidecar names are not duplicates": (
        HEAD + PLUGIN + SIDECAR.format("Bad!", "h/a") + SIDECAR.format("Bad!", "h/b"),
        [_v("plugin[0].sidecar[0].name", "'Bad!' is not a sidecar name", 16),
         _v("plugin[0].sidecar[1].name", "'Bad!' is not a sidecar name", 20)]),
    "sidecar name used twice": (
        HEAD + PLUGIN + SIDECAR.format("mail-helper", "h/a")
        + SIDECAR.format("mail-helper", "h/b"),
        [_v("plugin[0].sidecar", "a sidecar name is used twice", 6)]),
    "plugin not a table": (
        'schema = 1\nplugin = [1]\n\n[publish]\ndestination = "unconfigured"\n',
        [_t("plugin[0]", "expected an object, got 1", 2)]),
    "empty plugin array": (
        'schema = 1\nplugin = []\n\n[publish]\ndestination = "unconfigured"\n',
        [_v("plugin", "no [[plugin]] declared", 2, "declaration.missing-key")]),
    "plugin id twice": (
        HEAD + PLUGIN + PLUGIN,
        [_v("plugin", "id 'example' declared twice", None)]),
    "second plugin named by index": (
        HEAD + PLUGIN + PLUGIN.replace('"example"', '"Ex!"'),
        [_v("plugin[1].id", "'Ex!' does not match [a-z][a-z0-9-]{1,62}", 16)]),
    "publish table required": (
        "schema = 1\ndestination = 'x'\n" + PLUGIN,
        [_v("publish.destination", "required key is missing", None,
            "declaration.missing-key"),
         _v("destination", "unknown key", 2, "declaration.unknown-key",
            "Did you mean `publish.destination`? `destination` belongs in `publish`.")]),
    "sidecar key in plugin": (
        HEAD + PLUGIN + "executable = true\n",
        [_v("plugin[0].executable", "unknown key", 14, "declaration.unknown-key",
            "Did you mean `plugin.sidecar.executable`? `executable` belongs in "
            "`plugin.sidecar`.")]),
    "not TOML": (
        "schema = = 1\n",
        [("declaration.syntax", "horon-release.toml: Invalid value (at line 1, column 10)", "",
          1)]),
}


@pytest.mark.parametrize("case", sorted(READER_FAULTS))
def test_declaration_reader_findings(case: str, tmp_path: Path) -> None:
    text, expected = READER_FAULTS[case]
    assert _refusal(tmp_path, text) == expected


# --- core/fields.py: the reader every decoder shares (what each finding says) ---------------
def _reader() -> tuple[FieldReader, Findings]:
    findings = Findings()
    return FieldReader("f.json", findings, codes.MANIFEST_UNKNOWN_FIELD,
                       codes.MANIFEST_MISSING_FIELD, codes.MANIFEST_TYPE), findings


def _said(findings: Findings) -> list[tuple[str, str, str]]:
    return [(f.code.name, f.message, f.hint) for f in findings.items]


@pytest.mark.parametrize(("value", "described"), [
    ("x" * 60, repr("x" * 60)),  # at the limit: whole
    ("x" * 61, repr("x" * 57 + "...")),  # past it: cut to 57 and marked
    ("é" * 70, repr("é" * 57 + "...")),
    (None, "null"), (True, "true"), (False, "false"), (3, "3"), (2.5, "2.5"),
    ([1], "an array"), ({}, "an object"), (b"x", "bytes"), ((1,), "tuple"),
])
def test_values_are_described_in_a_finding_as_written(value: object, described: str) -> None:
    assert describe_value(value) == described


def test_a_field_that_may_be_null_is_read_present_null_or_refused() -> None:
    reader, findings = _reader()
    assert reader.take_nullable({"k": "v"}, "k", str, "top") == (True, "v")
    assert reader.take_nullable({"k": None}, "k", str, "top") == (True, None)
    assert reader.take_nullable({}, "k", str, "top") == (False, None)
    assert reader.take_nullable({"k": 1}, "k", str, "top.inner") == (False, None)
    assert _said(findings) == [
        ("manifest.missing-field", "f.json: top.k: required field is missing", ""),
        ("manifest.type", "f.json: top.inner.k: expected a string, got 1", "")]
    assert reader.known == {"top": {"k"}, "top.inner": {"k"}}
    reader.finish({"kk": 1}, "top")
    assert _said(findings)[-1] == (
        "manifest.unknown-field", "f.json: top.kk: unknown field",
        "Did you mean `k`? An unknown field is refused, never ignored.")


def test_a_null_where_a_value_is_required_names_the_field() -> None:
    reader, findings = _reader()
    assert reader.take({"k": None}, "k", int, "top") is None
    assert _said(findings) == [
        ("manifest.missing-field", "f.json: top.k: null where an integer is required", "")]


def test_an_unknown_key_is_given_the_nearest_known_key_of_its_object() -> None:
    reader, _ = _reader()
    for key in ("features", "feature-list", "featured", "zeta"):
        reader.take_optional({}, key, str, "plugin[0]", "")
    reader.take_optional({}, "profile", str, "build", "")
    # the closest of several candidates, not the second closest nor the first in order
    assert reader.suggestion("featurez", "plugin[1]").startswith("Did you mean `features`?")
    assert reader.suggestion("feature-lst", "plugin[0]").startswith(
        "Did you mean `feature-list`?")
    # 0.6 is the cut-off: `zet` is close enough to `zeta`, `zxy` is not close to anything
    assert reader.suggestion("zet", "plugin[0]").startswith("Did you mean `zeta`?")
    assert reader.suggestion("profile", "plugin[0]") == (
        "Did you mean `build.profile`? `profile` belongs in `build`.")
    assert reader.suggestion("zxy", "plugin[0]") == (
        "Known fields here: feature-list, featured, features, zeta.")
    assert reader.suggestion("zxy", "nowhere") == "Remove the field: this object defines none."
