"""`sign` with a usable identity but no Sigstore to reach: `signing.failed`, exit 3, quickly.

The identity token is a well-formed OIDC token (the claims sigstore-python requires, within
its validity period) that no issuer signed: the client forwards tokens without verifying
them, so the run goes as far as the network. The child runs in a network namespace of its
own (`unshare -rn`), so the first request (the TUF refresh of the Sigstore trust root) fails
at once, whatever this machine's connectivity; sigstore-python's caches are pointed at a
fresh directory so that nothing cached can stand in for the network.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
import requests

from horon_bundle.sign.signer import NetworkDeadlineError, network_deadline
from tests.conftest import BuiltExample
from tests.helpers import assert_refused, cli, tree_snapshot

pytestmark = [pytest.mark.cargo, pytest.mark.process]

SUBJECT = "release-bot@example.invalid"


def _segment(document: Mapping[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()


def _unsigned_token(now: int) -> str:
    header = {"alg": "RS256", "typ": "JWT", "kid": "test"}
    claims = {"iss": "https://issuer.example.invalid", "sub": SUBJECT, "aud": "sigstore",
              "iat": now, "nbf": now, "exp": now + 600}
    signature = base64.urlsafe_b64encode(b"\x00" * 256).rstrip(b"=").decode()
    return f"{_segment(header)}.{_segment(claims)}.{signature}"


@pytest.mark.slow
def test_signing_without_a_reachable_sigstore_fails_quickly(
        tmp_path: Path, example_release: BuiltExample) -> None:
    if shutil.which("unshare") is None:
        pytest.fail("unshare is not installed (Debian package util-linux)")
    dist = tmp_path / "dist"
    dist.mkdir()
    archive = dist / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    token = _unsigned_token(int(time.time()))
    env = {"SIGSTORE_IDENTITY_TOKEN": token, "GITHUB_ACTIONS": "",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data")}
    before = tree_snapshot(dist)
    started = time.monotonic()
    result = cli("sign", archive, env=env, prefix=("unshare", "-rn"), timeout=120)
    elapsed = time.monotonic() - started
    assert_refused(result, "signing.failed", status=3)
    assert set(result.codes) == {"signing.failed"}, result.stderr
    assert f"signing as {SUBJECT}" in result.stderr
    assert "Sigstore signing failed: " in result.stderr
    assert token not in result.stdout + result.stderr
    assert elapsed < 30, elapsed
    assert tree_snapshot(dist) == before


@pytest.mark.slow
def test_a_silent_sigstore_server_hits_the_deadline() -> None:
    """sigstore posts without a timeout; the deadline ends a request nobody answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(NetworkDeadlineError), network_deadline(1.0):
            # no timeout on purpose: this is how sigstore 4.5 calls Fulcio
            requests.post(f"http://127.0.0.1:{port}/api/v2/signingCert", data=b"{}")  # noqa: S113
        assert time.monotonic() - started < 10
