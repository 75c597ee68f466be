"""Speed and memory of the streaming stages on a large library (run with `nox -s bench`).

Goals (measured on this kind of machine, 2 cores): hashing streams at ≥ 1 GB/s; verifying a
bundle whose library is 512 MiB keeps peak RSS under 64 MiB (memory flat whatever the size).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from horon_bundle.build.archive import write_archive
from horon_bundle.core.hashing import hash_file

SIZE = 512 << 20


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "libbig.so"
    with path.open("wb") as stream:
        block = os.urandom(1 << 20)
        for _ in range(SIZE >> 20):
            stream.write(block)
    return path


def test_hash_throughput(benchmark: BenchmarkFixture, big_file: Path) -> None:
    digest = benchmark.pedantic(hash_file, args=(big_file,), rounds=3, iterations=1)
    assert digest.size == SIZE
    seconds = benchmark.stats.stats.mean
    benchmark.extra_info["MB_per_s"] = round(SIZE / seconds / 1e6)


def test_archive_write(benchmark: BenchmarkFixture, big_file: Path, tmp_path: Path) -> None:
    bundle = big_file.parent
    destination = tmp_path / "big.zip"

    def write() -> None:
        destination.unlink(missing_ok=True)
        write_archive(bundle, [(big_file.name, False)], destination, epoch=0)

    benchmark.pedantic(write, rounds=1, iterations=1)


def test_verify_memory_is_flat(big_file: Path, tmp_path: Path) -> None:
    """verify of a bundle directory with a 512 MiB library, in a child: peak RSS stays small."""
    bundle = tmp_path / "bundle"
    (bundle / "lib").mkdir(parents=True)
    os.link(big_file, bundle / "lib" / big_file.name)
    script = ("import resource,sys; from horon_bundle.verify.judge import verify_path; "
              "verify_path(__import__('pathlib').Path(sys.argv[1])); "
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", script, str(bundle)], capture_output=True,
                          text=True, check=True)
    peak_kib = int(done.stdout.strip())
    assert peak_kib < 64 * 1024, f"peak RSS {peak_kib} KiB"
