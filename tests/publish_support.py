"""Publish test support: a real OCI registry on loopback, and a few distinct real bundles.

The registry is Debian's `docker-registry` (distribution 2.8), started with its own config
(its packaged config listens everywhere with broken htpasswd auth) on a free loopback port,
with temp storage and an access log that tests read to count requests. It is stopped by PID.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

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
        self.namespace = NAMESPACE
        self.shared = False  # a view of a registry other tests use: never stopped by one
        self.log_offset = 0  # accesses() reads the log from here on
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
        return f"oci://{self.host}/{self.namespace}"

    def repository(self, plugin: str = "example") -> str:
        """A plugin's repository under this registry's namespace (`horon/example`)."""
        return f"{self.namespace}/{plugin}"

    def for_test(self, test: str) -> Registry:
        """This running registry as one test sees it: a repository namespace of its own and
        the access log from now on (the tests of one worker run one at a time)."""
        view = copy.copy(self)
        view.shared = True
        view.namespace = f"{NAMESPACE}-{hashlib.sha256(test.encode()).hexdigest()[:12]}"
        view.log_offset = self.log.stat().st_size if self.log.exists() else 0
        return view

    def start(self) -> None:
        assert not self.shared, "a test that starts or stops a registry takes fresh_registry"
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
        assert not self.shared, "a test that starts or stops a registry takes fresh_registry"
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def accesses(self) -> list[Access]:
        """Every request the registry logged (its combined access log)."""
        if not self.log.exists():
            return []
        with self.log.open("rb") as log:
            log.seek(self.log_offset)
            text = log.read().decode(errors="replace")
        return [Access(m.group(1), m.group(2), int(m.group(3)))
                for m in _ACCESS_LINE.finditer(text)]

    def get(self, path: str, accept: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(f"http://{self.host}{path}")
        if accept:
            request.add_header("Accept", accept)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@dataclass(frozen=True)
class Releases:
    """Archives of real builds: two plugins, a qa variant, and the same id/version/target with
    other bytes (another SOURCE_DATE_EPOCH changes the zip timestamps)."""

    example: Path
    example_qa: Path
    clean: Path
    example_other_bytes: Path


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
