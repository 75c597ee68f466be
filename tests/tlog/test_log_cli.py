"""`log keygen` and `log verify` (the monitor) on a store a real publish wrote: a rewritten
leaf, a rewritten or removed index entry, an entry the log lacks, a rollback and a fork are
each caught with their code, naming the first leaf that differs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from horon_bundle.tlog.note import parse_signer
from horon_bundle.tlog.tiles import join_entries, split_entries
from tests.helpers import HOST, REPO, assert_refused, cli
from tests.publish_support import Releases, make_dist, publish_env
from tests.tlog_support import key_file

SCHEMAS = REPO / "docs" / "schemas"
ENTRY = f"index/example/0.1.0/{HOST}.json"


def _valid(schema: str, document: object) -> None:
    jsonschema.Draft202012Validator(json.loads((SCHEMAS / schema).read_text())).validate(document)


@pytest.fixture(name="logged", scope="module")
def logged_fixture(tmp_path_factory: pytest.TempPathFactory,
                   releases: Releases) -> tuple[Path, str, Path]:
    """A store with a log of two publications and a yank; its verifier; the signer file."""
    root = tmp_path_factory.mktemp("logged")
    store = root / "store"
    store.mkdir()
    key, signer = key_file(root)
    env = {**publish_env(f"file://{store}"), "HORON_PUBLISH_LOG_KEY": str(key)}
    assert cli("publish", make_dist(root / "dist", releases.example, releases.clean),
               env=env).status == 0
    assert cli("yank", "clean", "0.1.0", "--reason", "old", env=env).status == 0
    return store, signer.verifier.text, key


def _copy(logged: tuple[Path, str, Path], tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "store"
    shutil.copytree(logged[0], store)
    return store, logged[1]


def test_keygen_writes_a_private_signer_and_prints_its_verifier(tmp_path: Path) -> None:
    result = cli("log", "keygen", "example.com/plugins", "--out", tmp_path / "k", "--json")
    assert result.status == 0, result.stderr
    document = result.json()
    _valid("log-keygen-result.schema.json", document)
    signer = parse_signer((tmp_path / "k").read_text())
    assert document["verifier"] == signer.verifier.text
    assert (tmp_path / "k").stat().st_mode & 0o777 == 0o600
    plain = cli("log", "keygen", "w.example/w1", "--witness", "--out", tmp_path / "w")
    assert plain.stdout.strip() == parse_signer((tmp_path / "w").read_text()).verifier.text
    again = cli("log", "keygen", "x", "--out", tmp_path / "k")
    assert again.status == 3 and "output.write-failed" in again.codes  # never overwritten
    assert parse_signer((tmp_path / "k").read_text()) == signer


def test_a_sound_log_verifies_and_prints_its_checkpoint(logged: tuple[Path, str, Path],
                                                        tmp_path: Path) -> None:
    store, verifier = logged[0], logged[1]
    result = cli("log", "verify", store.as_uri(), "--key", verifier, "--json")
    assert result.status == 0, result.stderr
    document = result.json()
    _valid("log-verify-result.schema.json", document)
    assert (document["size"], document["entries"]) == (3, 3)
    assert document["checkpoint"] == (store / "log" / "checkpoint").read_text()
    (tmp_path / "key").write_text(verifier + "\n")
    (tmp_path / "seen").write_text(document["checkpoint"])
    text = cli("log", "verify", store, "--key", tmp_path / "key", "--since", tmp_path / "seen")
    assert text.status == 0, text.stderr
    assert text.stdout == document["checkpoint"]


def test_a_rewritten_leaf_is_named(logged: tuple[Path, str, Path], tmp_path: Path) -> None:
    store, verifier = _copy(logged, tmp_path)
    bundle = store / "log" / "tile" / "entries" / "000.p" / "3"
    entries = split_entries(bundle.read_bytes(), "b", 3)
    entries[1] = entries[1].replace(b'"size"', b'"size" ')
    bundle.write_bytes(join_entries(entries))
    result = cli("log", "verify", store, "--key", verifier)
    assert_refused(result, "log.root")
    assert "leaf 1:" in result.stderr


@pytest.mark.parametrize("change", ["rewrite", "remove"])
def test_an_index_entry_changed_after_it_was_logged_is_named(
        logged: tuple[Path, str, Path], tmp_path: Path, change: str) -> None:
    store, verifier = _copy(logged, tmp_path)
    entry = store / ENTRY
    entry.chmod(0o644)
    if change == "rewrite":
        entry.write_bytes(entry.read_bytes().replace(b"example", b"example "))
    else:
        entry.unlink()
    result = cli("log", "verify", store, "--key", verifier, "--json")
    assert_refused(result, "log.leaf")
    first = result.json()["findings"][0]["message"]
    verb = "rewritten" if change == "rewrite" else "removed"
    assert first == f"leaf 1: {ENTRY} was {verb} after it was logged"


def test_an_entry_the_log_lacks_is_named(logged: tuple[Path, str, Path], tmp_path: Path) -> None:
    store, verifier = _copy(logged, tmp_path)
    extra = store / "index" / "example" / "9.9.9" / f"{HOST}.json"
    extra.parent.mkdir()
    extra.write_bytes((store / ENTRY).read_bytes())
    result = cli("log", "verify", store, "--key", verifier)
    assert_refused(result, "log.leaf")
    assert f"index/example/9.9.9/{HOST}.json: an entry of the store that is not in the log" \
        in result.stderr


def test_a_rollback_and_a_fork_are_caught(logged: tuple[Path, str, Path],
                                          tmp_path: Path, releases: Releases) -> None:
    store, verifier = _copy(logged, tmp_path)
    seen = tmp_path / "seen"
    seen.write_bytes((store / "log" / "checkpoint").read_bytes())
    # a rollback: the log as it was before the yank (its own, validly signed, checkpoint)
    older = tmp_path / "older"
    older.mkdir()
    env = {**publish_env(older.as_uri()), "HORON_PUBLISH_LOG_KEY": str(logged[2])}
    assert cli("publish", make_dist(tmp_path / "dist", releases.example, releases.clean),
               env=env).status == 0
    rolled = cli("log", "verify", older, "--key", verifier, "--since", seen)
    assert_refused(rolled, "log.rollback")
    assert "has 2 leaves, fewer than the 3 seen before" in rolled.stderr
    # a fork: the same key signs another history of the same size (one entry, then the others)
    forked = tmp_path / "forked"
    forked.mkdir()
    env = {**publish_env(forked.as_uri()), "HORON_PUBLISH_LOG_KEY": str(logged[2])}
    assert cli("publish", make_dist(tmp_path / "d1", releases.example), env=env).status == 0
    assert cli("publish", make_dist(tmp_path / "d2", releases.clean), env=env).status == 0
    assert cli("yank", "clean", "0.1.0", "--reason", "old", env=env).status == 0
    assert cli("log", "verify", forked, "--key", verifier).status == 0  # sound on its own
    fork = cli("log", "verify", forked, "--key", verifier, "--since", seen)
    assert_refused(fork, "log.inconsistent")


def test_another_key_and_no_log_are_refused(logged: tuple[Path, str, Path],
                                            tmp_path: Path) -> None:
    _, signer = key_file(tmp_path)
    other = cli("log", "verify", logged[0], "--key", signer.verifier.text)
    assert_refused(other, "log.signature")
    empty = cli("log", "verify", tmp_path, "--key", signer.verifier.text)
    assert_refused(empty, "log.checkpoint")
    https = cli("log", "verify", "https://example.com/store", "--key", signer.verifier.text)
    assert_refused(https, "log.unsupported", status=2)
