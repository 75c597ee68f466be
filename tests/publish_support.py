"""Publish test support: a real OCI registry on loopback, and a few distinct real bundles.

The registry is Debian's `docker-registry` (distribution 2.8), started with its own config
(its packaged config listens everywhere with broken htpasswd auth) on a free loopback port,
with temp storage and an access log that tests read to count requests. It is stopped by PID.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import BuiltExample
from tests.helpers import FIXTURES, HOST, TEMPLATE, cli

REGISTRY_BINARY = "docker-registry"
NAMESPACE = "horon"
_ACCESS_LINE = re.compile(r'"(GET|HEAD|POST|PUT|PATCH|DELETE) (\S+) HTTP/1\.[01]" (\d{3}) ')


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class Access:
    method: str
    path: str
    status: int


class Registry:
    """One docker-registry process: start, stop (by PID), restart on the same port/storage."""

    def __init__(self, root: Path, *, htpasswd: bytes | None = None) -> None:
        self.root = root
        self.storage = root / "storage"
        self.config = root / "config.yml"
        self.log = root / "registry.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.htpasswd = htpasswd  # set: every request needs HTTP basic credentials from it

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def destination(self) -> str:
        return f"oci://{self.host}/{NAMESPACE}"

    def start(self) -> None:
        self.storage.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            "version: 0.1\n"
            "log:\n  level: warn\n  accesslog:\n    disabled: false\n"
            f"storage:\n  filesystem:\n    rootdirectory: {self.storage}\n"
            "  delete:\n    enabled: false\n"
            f"http:\n  addr: {self.host}\n" + self._auth_config())
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [REGISTRY_BINARY, "serve", str(self.config)], stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"docker-registry exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except urllib.error.HTTPError as error:
                error.close()
                if error.code == 401 and self.htpasswd is not None:
                    return  # up, and asking for credentials as configured
                time.sleep(0.05)
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.05)
        raise RuntimeError("docker-registry did not answer /v2/ within 20 s")

    def _auth_config(self) -> str:
        if self.htpasswd is None:
            return ""
        path = self.root / "htpasswd"
        path.write_bytes(self.htpasswd)
        return f"auth:\n  htpasswd:\n    realm: horon-test\n    path: {path}\n"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def accesses(self) -> list[Access]:
        """Every request the registry logged (its combined access log)."""
        if not self.log.exists():
            return []
        return [Access(m.group(1), m.group(2), int(m.group(3)))
                for m in _ACCESS_LINE.finditer(self.log.read_text(errors="replace"))]

    def get(self, path: str, accept: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(f"http://{self.host}{path}")
        if accept:
            request.add_header("Accept", accept)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@pytest.fixture(name="registry")
def registry_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A fresh registry with empty storage for one test."""
    if shutil.which(REGISTRY_BINARY) is None:
        pytest.fail("docker-registry is not installed (apt-get install docker-registry)")
    registry = Registry(tmp_path_factory.mktemp("registry"))
    registry.start()
    try:
        yield registry
    finally:
        registry.stop()


@dataclass(frozen=True)
class Releases:
    """Archives of real builds: two plugins, a qa variant, and the same id/version/target with
    other bytes (another SOURCE_DATE_EPOCH changes the zip timestamps)."""

    example: Path
    example_qa: Path
    clean: Path
    example_other_bytes: Path


def _built(out: Path, name: str) -> Path:
    archive = out / name
    assert archive.is_file(), sorted(p.name for p in out.iterdir())
    return archive


@pytest.fixture(name="releases", scope="session")
def releases_fixture(tmp_path_factory: pytest.TempPathFactory, cargo_target_dir: Path,
                     example_release: BuiltExample) -> Releases:
    qa_out = tmp_path_factory.mktemp("example-qa")
    built = cli("build", TEMPLATE, "--channel", "qa", "--out", qa_out,
                "--target-dir", cargo_target_dir)
    assert built.status == 0, built.stderr
    clean_out = tmp_path_factory.mktemp("clean")
    built = cli("build", FIXTURES / "qa-member-only", "--out", clean_out,
                "--target-dir", cargo_target_dir)
    assert built.status == 0, built.stderr
    other_out = tmp_path_factory.mktemp("example-other-bytes")
    built = cli("build", TEMPLATE, "--out", other_out, "--target-dir", cargo_target_dir,
                env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert built.status == 0, built.stderr
    releases = Releases(
        example=example_release.archive,
        example_qa=_built(qa_out, f"example-0.1.0-{HOST}-qa.zip"),
        clean=_built(clean_out, f"clean-{_version(clean_out)}-{HOST}.zip"),
        example_other_bytes=_built(other_out, f"example-0.1.0-{HOST}.zip"))
    assert releases.example.read_bytes() != releases.example_other_bytes.read_bytes()
    return releases


def _version(out: Path) -> str:
    names = [p.name for p in out.glob("clean-*.zip")]
    assert len(names) == 1, names
    return names[0][len("clean-"):-len(f"-{HOST}.zip")]


SIDE_SUFFIXES = (".sha256", ".build.json", ".sigstore.json", ".provenance.sigstore.json")


def make_dist(root: Path, *archives: Path) -> Path:
    """A release directory holding copies of `archives` and the files beside them."""
    root.mkdir(parents=True, exist_ok=True)
    for archive in archives:
        shutil.copy2(archive, root / archive.name)
        for suffix in SIDE_SUFFIXES:
            side = archive.with_name(archive.name + suffix)
            if side.exists():
                shutil.copy2(side, root / side.name)
    return root


def place_signature(bundle: Path, archive: Path) -> Path:
    """`bundle` (a real Sigstore message-signature bundle of another file) beside `archive`,
    its messageDigest set to the archive's: what publish checks without a signer (structure
    and digest), while its certificate and signature stay those of the other file, which only
    `--require-signature` verifies."""
    document = json.loads(bundle.read_bytes())
    digest = hashlib.sha256(archive.read_bytes()).digest()
    document["messageSignature"]["messageDigest"]["digest"] = base64.b64encode(digest).decode()
    side = archive.with_name(archive.name + ".sigstore.json")
    side.write_text(json.dumps(document))
    return side


def publish_env(destination: str) -> dict[str, str]:
    return {"HORON_PUBLISH_ENABLED": "true", "HORON_PUBLISH_DESTINATION": destination}
