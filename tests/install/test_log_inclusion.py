"""`verify` and `install` with `--log STORE --log-key KEY`: the store's index entry for the
archive must be in a checkpoint of that key, proven from the tiles, offline; the home keeps
the largest checkpoint seen and refuses a smaller or inconsistent one; witnesses' k of n."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.reporter import SilentReporter
from horon_bundle.install.installer import install
from horon_bundle.install.request import InstallRequest
from horon_bundle.tlog.checkpoint import parse_checkpoint
from horon_bundle.tlog.note import COSIGNATURE_V1, Note, cosign, generate
from tests.harness_support import built_zip
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.publish_support import Releases, make_dist, publish_env
from tests.tlog_support import key_file

ENTRY = f"index/example/0.1.0/{HOST}.json"


@pytest.fixture(name="stores", scope="module")
def stores_fixture(tmp_path_factory: pytest.TempPathFactory,
                   releases: Releases) -> dict[str, Path | str]:
    """`one`: a store whose log holds the example; `two`: the same log, then clean and a
    harness zip (the `one` log extended); `fork`: the same key, another history."""
    root = tmp_path_factory.mktemp("stores")
    key, signer = key_file(root)
    harness = built_zip(root / "harness")

    def publish(store: Path, *archives: Path) -> None:
        env = {**publish_env(store.as_uri()), "HORON_PUBLISH_LOG_KEY": str(key)}
        result = cli("publish", make_dist(root / f"dist-{store.name}-{len(archives)}",
                                          *archives), env=env)
        assert result.status == 0, result.stderr

    one, two, fork = root / "one", root / "two", root / "fork"
    for store in (one, two, fork):
        store.mkdir()
    publish(two, releases.example)
    shutil.copytree(two, one, dirs_exist_ok=True)
    publish(two, releases.clean, harness)
    publish(fork, releases.clean)
    publish(fork, releases.example, harness)
    return {"one": one, "two": two, "fork": fork, "key": signer.verifier.text,
            "signer": key, "harness": harness}


def _log(stores: dict[str, Path | str], store: str) -> list[str | Path]:
    return ["--log", stores[store], "--log-key", stores["key"]]


def test_verify_and_install_accept_an_included_archive(
        stores: dict[str, Path | str], releases: Releases, tmp_path: Path) -> None:
    verified = cli("verify", releases.example, *_log(stores, "two"))
    assert verified.status == 0, verified.stderr
    assert f"in the log {ENTRY}: leaf 0 of example.com/plugins's checkpoint of 3 leaves" \
        in verified.stdout
    harness = cli("verify", stores["harness"], *_log(stores, "two"))
    assert harness.status == 0, harness.stderr
    assert "in the log harness/index/" in harness.stdout
    home = tmp_path / "home"
    installed = cli("install", releases.example, "--home", home, *_log(stores, "two"))
    assert installed.status == 0, installed.stderr
    [kept] = (home / "log-checkpoints").glob("[0-9a-f]*")
    assert kept.read_bytes() == (Path(stores["two"]) / "log" / "checkpoint").read_bytes()


@pytest.mark.parametrize("change", ["rewrite", "remove"])
def test_an_entry_rewritten_or_removed_after_logging_is_refused(
        stores: dict[str, Path | str], releases: Releases, tmp_path: Path, change: str) -> None:
    store = tmp_path / "store"
    shutil.copytree(stores["two"], store)
    entry = store / ENTRY
    entry.chmod(0o644)
    if change == "rewrite":  # the same archive digest, another plugin.json digest
        entry.write_bytes(entry.read_bytes().replace(b'"plugin_json": {\n    "sha256": "',
                                                     b'"plugin_json": {\n    "sha256": "0'))
    else:
        entry.unlink()
    home = tmp_path / "home"
    before = tree_snapshot(tmp_path)
    result = cli("install", releases.example, "--home", home, "--log", store, "--log-key",
                 stores["key"])
    assert_refused(result, "log.not-included")
    assert tree_snapshot(tmp_path) == before
    assert_refused(cli("verify", releases.example, "--log", store, "--log-key", stores["key"]),
                   "log.not-included")


def test_an_archive_not_in_the_store_and_another_key_are_refused(
        stores: dict[str, Path | str], releases: Releases) -> None:
    assert_refused(cli("verify", releases.example_other_bytes, *_log(stores, "two")),
                   "log.not-included")
    other = generate("example.com/plugins").verifier.text
    assert_refused(cli("verify", releases.example, "--log", stores["two"], "--log-key", other),
                   "log.signature")


def test_the_home_refuses_a_rollback_and_a_fork(stores: dict[str, Path | str],
                                                releases: Releases, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert cli("verify", releases.example, *_log(stores, "two"), "--home", home).status == 0
    rolled = cli("install", releases.example, "--home", home, *_log(stores, "one"))
    assert_refused(rolled, "log.rollback")
    assert "checkpoint of 1 leaves; this host has seen 3" in rolled.stderr
    assert not (home / "native-plugins").exists()
    forked = cli("verify", releases.example, *_log(stores, "fork"), "--home", home)
    assert_refused(forked, "log.inconsistent")
    assert "checkpoint of 3 leaves does not extend the one of 3" in forked.stderr
    # a fresh home has seen nothing: the older log is accepted, then the newer extends it
    fresh = tmp_path / "fresh"
    assert cli("verify", releases.example, *_log(stores, "one"), "--home", fresh).status == 0
    assert cli("verify", releases.example, *_log(stores, "two"), "--home", fresh).status == 0


def test_k_of_n_witnesses(stores: dict[str, Path | str], releases: Releases,
                          tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(stores["two"], store)
    path = store / "log" / "checkpoint"
    checkpoint = parse_checkpoint(path.read_bytes(), "cp")
    w1, w2 = (generate(f"witness.example/w{n}", COSIGNATURE_V1) for n in (1, 2))
    line = cosign(checkpoint.body, w1, 1_700_000_000)
    path.write_bytes(Note(checkpoint.body, (*checkpoint.note.signatures, line)).text)
    keys = ["--witness", w1.verifier.text, "--witness", w2.verifier.text]
    log: list[str | Path] = ["--log", store, "--log-key", stores["key"]]
    one = cli("verify", releases.example, *log, *keys, "--witnesses-required", "1")
    assert one.status == 0, one.stderr
    assert "cosigned by witness.example/w1" in one.stdout
    both = cli("verify", releases.example, *log, *keys)
    assert_refused(both, "log.witness")
    assert "cosigned by 1 of the named witnesses (witness.example/w1), 2 required" in both.stderr
    assert cli("verify", releases.example, *log, *keys, "--witnesses-required", "3").status == 2


def test_log_options_that_do_not_go_together_are_usage_errors(
        stores: dict[str, Path | str], releases: Releases) -> None:
    assert cli("verify", releases.example, "--log", stores["two"]).status == 2
    assert cli("verify", releases.example, "--witness", stores["key"]).status == 2
    directory = cli("verify", Path(stores["two"]), *_log(stores, "two"))
    assert directory.status == 2 and "not a directory" in directory.stderr


@pytest.mark.parametrize("which", ["native", "harness"])
def test_the_bytes_installed_are_the_bytes_the_log_check_hashed(
        stores: dict[str, Path | str], releases: Releases, tmp_path: Path, which: str) -> None:
    """An archive replaced between `--log`'s check and the install's own hash is refused."""
    source = releases.example if which == "native" else Path(stores["harness"])
    home = tmp_path / "home"
    request = InstallRequest(source=source, home=home, expected_sha256="0" * 64)
    with pytest.raises(Refused) as caught:
        install(request, SilentReporter())
    assert caught.value.codes() == ["install.integrity"]
    assert "when it was checked against its log entry" in str(caught.value.findings[0].message)
    assert not home.exists()
