"""Transparency-log test support: Go's reference implementation as an independent checker
(tests/tlog/go_checker/main.go, built once per run with Debian's golang-go and
golang-golang-x-mod-dev), and key files."""

from __future__ import annotations

import base64
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.tlog.note import Signer, generate

CHECKER_SOURCE = Path(__file__).parent / "tlog" / "go_checker" / "main.go"
GOPATH = "/usr/share/gocode"  # where golang-golang-x-mod-dev puts golang.org/x/mod


def build_checker(out: Path) -> None:
    env = {**os.environ, "GOPATH": GOPATH, "GO111MODULE": "off", "GOCACHE": str(out / "cache")}
    subprocess.run(["go", "build", "-o", str(out / "checker"), str(CHECKER_SOURCE)], env=env,
                   check=True, capture_output=True, timeout=300)


@dataclass(frozen=True)
class GoVerdict:
    ok: bool
    size: int
    root: str
    leaves: list[bytes]
    error: str


@dataclass(frozen=True)
class GoChecker:
    binary: Path

    def check(self, log_dir: Path, verifier: str) -> GoVerdict:
        done = subprocess.run([str(self.binary), str(log_dir), verifier], capture_output=True,
                              text=True, timeout=60, check=False)
        if done.returncode != 0:
            return GoVerdict(False, 0, "", [], done.stderr.strip())
        lines = done.stdout.splitlines()
        _, size, root = lines[0].split()
        leaves = [base64.b64decode(line.split()[2]) for line in lines[1:]]
        return GoVerdict(True, int(size), root, leaves, "")


def key_file(directory: Path, name: str = "example.com/plugins") -> tuple[Path, Signer]:
    signer = generate(name)
    path = directory / "log-signer.key"
    path.write_text(signer.text + "\n")
    path.chmod(0o600)
    return path, signer
