"""A directory served over HTTPS under a host name, on loopback only, for the real host.

Claude Code refuses archive URLs naming `localhost` or a loopback address, so the server gets
a name (`plugins.test`) that resolves only where the test wants it to:

- a private test CA and a certificate for that name, made with openssl in the test's
  directory (the host trusts the CA through `NODE_EXTRA_CA_CERTS`);
- the server (tests/static_https_server.py) is started by `unshare --user --map-root-user
  --mount --net` in namespaces of its own: a copy of /etc/hosts with one more line,
  `127.0.0.1 plugins.test`, is bind-mounted over /etc/hosts there, and the network namespace
  holds nothing but loopback;
- every host command joins those namespaces (`nsenter --user --mount --net`, the `prefix`),
  so the name resolves for it and no address but 127.0.0.1 exists: nothing the host does can
  reach another machine.

The server is stopped by its PID. Needs util-linux (unshare, nsenter, mount), openssl, and
user namespaces (root, or unprivileged user namespaces allowed).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_NAME = "plugins.test"
SERVER = Path(__file__).resolve().parent / "static_https_server.py"
START_TIMEOUT = 20.0


@dataclass(frozen=True, slots=True)
class NamedServer:
    pid: int
    port: int
    name: str
    ca: Path  # the test CA's certificate (PEM), for NODE_EXTRA_CA_CERTS
    log: Path  # the server's request log

    @property
    def base_url(self) -> str:
        return f"https://{self.name}:{self.port}"

    @property
    def prefix(self) -> list[str]:
        """Run a command inside the server's namespaces (its name resolves, only loopback)."""
        return ["nsenter", f"--target={self.pid}", "--user", "--mount", "--net",
                "--preserve-credentials", "--"]

    @property
    def env(self) -> dict[str, str]:
        return {"NODE_EXTRA_CA_CERTS": str(self.ca)}

    def requests(self) -> list[str]:
        """The request lines served so far (`GET /path HTTP/1.1`)."""
        return [line.split('"')[1] for line in self.log.read_text().splitlines()
                if line.count('"') >= 2]


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        pytest.fail(f"openssl {args[0]} failed: {done.stderr.strip()[-500:]}", pytrace=False)


def make_certificates(directory: Path, name: str) -> tuple[Path, Path, Path]:
    """A private CA, and a server certificate for `name` it signs: (ca.pem, cert, key)."""
    directory.mkdir(parents=True, exist_ok=True)
    curve = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    _openssl("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=horon-bundle test CA", "-addext",
             "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
             cwd=directory)
    _openssl("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj",
             f"/CN={name}", cwd=directory)
    (directory / "server.ext").write_text(f"subjectAltName=DNS:{name}\nbasicConstraints="
                                          "CA:FALSE\nextendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
             cwd=directory)
    return directory / "ca.pem", directory / "server.pem", directory / "server.key"


@contextlib.contextmanager
def serve_directory(root: Path, work: Path, name: str = SERVER_NAME) -> Iterator[NamedServer]:
    """Serve `root` at https://NAME:PORT inside fresh namespaces until the block ends."""
    missing = [tool for tool in ("unshare", "nsenter", "mount", "openssl")
               if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the host test needs {', '.join(missing)} (util-linux, openssl)",
                    pytrace=False)
    ca, cert, key = make_certificates(work / "tls", name)
    hosts = work / "hosts"
    hosts.write_text(Path("/etc/hosts").read_text() + f"\n127.0.0.1 {name}\n")
    port_file, log = work / "port", work / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            ["unshare", "--user", "--map-root-user", "--mount", "--net", "--", "sh", "-c",
             'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts), sys.executable, "-I",
             str(SERVER), str(root), str(cert), str(key), str(port_file)],
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not port_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the HTTPS server did not start in private user, mount and network "
                            "namespaces (root, or unprivileged user namespaces, are needed: "
                            "sysctl kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu "
                            f"24.04): {log.read_text()[-1500:]}", pytrace=False)
            time.sleep(0.02)
        yield NamedServer(pid=process.pid, port=int(port_file.read_text()), name=name, ca=ca,
                          log=log)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
