"""Signed notes and their keys: what `log keygen` writes reads back; every malformed key,
note and checkpoint is refused with its code (Go's reference reads them too:
tests/tlog/test_go_reference.py)."""

from __future__ import annotations

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.tlog.checkpoint import open_checkpoint, parse_checkpoint, signed_checkpoint
from horon_bundle.tlog.note import (
    COSIGNATURE_V1,
    Note,
    cosign,
    generate,
    parse_note,
    parse_signer,
    parse_verifier,
    signed_by,
)

ROOT = bytes(range(32))


def test_keys_read_back_and_a_checkpoint_verifies() -> None:
    signer = generate("example.com/log")
    assert parse_signer(signer.text) == signer
    verifier = parse_verifier(signer.verifier.text)
    assert signer.text.startswith("PRIVATE+KEY+example.com/log+")
    checkpoint = signed_checkpoint(signer.name, 7, ROOT, signer)
    opened = open_checkpoint(checkpoint.text, verifier, "cp")
    assert (opened.origin, opened.size, opened.root) == ("example.com/log", 7, ROOT)
    assert checkpoint.body == b"example.com/log\n7\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"


@pytest.mark.parametrize("text", [
    "", "a+b", "a b+01234567+AQ==", "name+0123456+AAAA", "name+zzzzzzzz+AAAA",
    "name+01234567+not-base64!", "name+01234567+AQID",
])
def test_malformed_verifier_keys_are_refused(text: str) -> None:
    with pytest.raises(Refused) as caught:
        parse_verifier(text)
    assert caught.value.codes() == ["log.key"]


def test_a_key_whose_hash_is_not_its_own_is_refused() -> None:
    text = generate("log").verifier.text
    name, _hash, key = text.split("+", 2)
    with pytest.raises(Refused, match="is not the key's"):
        parse_verifier(f"{name}+00000000+{key}")
    with pytest.raises(Refused, match="does not start"):
        parse_signer(text)


def test_another_key_or_a_changed_body_does_not_verify() -> None:
    signer, other = generate("log"), generate("log")
    checkpoint = signed_checkpoint("log", 1, ROOT, signer)
    with pytest.raises(Refused) as caught:
        open_checkpoint(checkpoint.text, other.verifier, "cp")
    assert caught.value.codes() == ["log.signature"]
    changed = checkpoint.text.replace(b"\n1\n", b"\n2\n")
    with pytest.raises(Refused, match="does not verify"):
        open_checkpoint(changed, signer.verifier, "cp")
    wrong_origin = signed_checkpoint("elsewhere", 1, ROOT, signer)
    with pytest.raises(Refused, match="origin"):
        open_checkpoint(wrong_origin.text, signer.verifier, "cp")


@pytest.mark.parametrize("data", [
    b"log\n1\n", b"log\n1\nAAAA\n\n\xe2\x80\x94 log AAAAAAA=\n",
    b"log\n01\n" + b"A" * 43 + b"=\n\n",
    b"\xff\n\n", b"log\n1\nAAAA\n\n- log AAAAAAA=\n", b"log\n\x01\n\n\xe2\x80\x94 log AAAAAAA=\n",
])
def test_malformed_checkpoints_are_refused(data: bytes) -> None:
    with pytest.raises(Refused) as caught:
        parse_checkpoint(data, "cp")
    assert caught.value.codes() == ["log.checkpoint"]


def test_a_cosignature_verifies_with_the_witness_key_only() -> None:
    log, witness = generate("log"), generate("witness.example/w1", COSIGNATURE_V1)
    checkpoint = signed_checkpoint("log", 3, ROOT, log)
    line = cosign(checkpoint.body, witness, 1_700_000_000)
    note = Note(checkpoint.body, (*checkpoint.note.signatures, line))
    reread = parse_note(note.text, "cp")
    assert signed_by(reread, parse_verifier(witness.verifier.text)) is True
    assert signed_by(reread, log.verifier) is True
    assert signed_by(reread, generate("other", COSIGNATURE_V1).verifier) is None
    other_body = signed_checkpoint("log", 4, ROOT, log)
    moved = Note(other_body.body, (*other_body.note.signatures, line))
    assert signed_by(moved, witness.verifier) is False
