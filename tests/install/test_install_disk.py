"""A full disk and a foreign file system, for real: a small tmpfs in a private mount namespace.

`unshare -rm` (a user and mount namespace: works as root and, where unprivileged user
namespaces are allowed, as any user) mounts a tmpfs that only the test's child sees. No
ENOSPC is injected: the kernel refuses the write. The scenario runs inside the namespace
(the mount ends with it) and reports what it saw as JSON.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.install_support import Bundles

pytestmark = [pytest.mark.cargo, pytest.mark.process]

_PREFIX = ["unshare", "-rm", "--"]


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run([*_PREFIX, "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, check=False)
    return probe.returncode == 0


needs_namespace = pytest.mark.skipif(not _namespaces_work(),
                                     reason="no private mount namespace here (unshare -rm)")

_DISK_FULL = r"""
import json, os, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.helpers import cli, tree_snapshot
from tests.install_support import debris
mount, v1, v2 = Path(sys.argv[2]), sys.argv[3], sys.argv[4]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
home = mount / "home"
seen = {"first": cli("install", v1, "--home", home, "--enable").status}
before = tree_snapshot(home)
filler = mount / "filler"
fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # fill the file system, then free 128 KiB
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError:
    pass
os.close(fd)
os.truncate(filler, max(0, filler.stat().st_size - 128 * 1024))
full = cli("install", v2, "--home", home, "--enable")
seen.update(status=full.status, codes=full.codes, traceback="Traceback" in full.stderr,
            stderr=full.stderr, same=tree_snapshot(home) == before, debris=debris(home),
            check=cli("check", "example", "--home", home).status)
filler.unlink()
seen["after"] = cli("install", v2, "--home", home, "--enable").status
seen["debris_after"] = debris(home)
print(json.dumps(seen))
"""

_CROSS_DEVICE = r"""
import json, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.helpers import cli, tree_snapshot
home, v1 = Path(sys.argv[2]), sys.argv[3]
mount = home / "native-plugins" / "example"
mount.mkdir(parents=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
result = cli("install", v1, "--home", home)
native = sorted(tree_snapshot(home / "native-plugins"))
print(json.dumps({"status": result.status, "codes": result.codes, "stderr": result.stderr,
                  "inside": tree_snapshot(mount), "native": native}))
"""


def _inside(script: str, *args: str | Path) -> dict[str, object]:
    done = subprocess.run([*_PREFIX, sys.executable, "-c", script, str(REPO), *map(str, args)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.slow
@needs_namespace
def test_a_full_disk_while_staging_leaves_no_debris_and_the_old_state(bundles: Bundles,
                                                                      tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    seen = _inside(_DISK_FULL, mount, bundles.v1, bundles.v2)
    assert seen["first"] == 0
    assert seen["status"] == 3, seen["stderr"]
    assert seen["codes"] == ["install.io"], seen["stderr"]
    assert "No space left on device" in str(seen["stderr"])
    assert seen["traceback"] is False
    assert seen["same"] is True and seen["debris"] == []
    assert seen["check"] == 0  # 0.1.0 still enabled and intact
    assert seen["after"] == 0 and seen["debris_after"] == []


@pytest.mark.slow
@needs_namespace
def test_a_mount_point_inside_native_plugins_is_refused(bundles: Bundles,
                                                        tmp_path: Path) -> None:
    seen = _inside(_CROSS_DEVICE, tmp_path / "home", bundles.v1)
    assert seen["status"] == 1, seen["stderr"]
    assert seen["codes"] == ["install.cross-device"]
    assert "native-plugins/example is on another file system" in str(seen["stderr"])
    assert seen["inside"] == {} and seen["native"] == ["example"]
