"""What the benchmark measures on, made through the real toolchain: plugin workspaces from the
template whose library links a blob of the wanted size (`global_asm!` + `.incbin`, which
costs rustc nothing; `include_bytes!` would need gigabytes), a bundle with 5,000 sidecars,
and a workspace of 20 plugins."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "templates" / "plugin"
MIB = 1 << 20

_BLOB_ASM = '''
// benchmark payload: a blob linked into .rodata (R: kept through --gc-sections)
core::arch::global_asm!(
    ".section .rodata.big,\\"aR\\",@progbits",
    ".globl big_blob",
    "big_blob:",
    ".incbin \\"{blob}\\"",
    ".previous"
);
'''


def _copy_template(destination: Path) -> Path:
    shutil.copytree(TEMPLATE, destination, ignore=shutil.ignore_patterns("target", "dist"))
    return destination


def write_blob(path: Path, size: int) -> None:
    """Incompressible bytes (the worst case for deflate and the honest one for hashing)."""
    block = os.urandom(MIB)
    with path.open("wb") as stream:
        for _ in range(size // MIB):
            stream.write(block if size > 64 * MIB else os.urandom(MIB))
        stream.write(os.urandom(size % MIB))


def sized_workspace(root: Path, size: int) -> Path:
    """The example plugin, its library carrying `size` bytes of blob."""
    workspace = _copy_template(root / f"plugin-{size // MIB}mib")
    blob = root / f"blob-{size // MIB}mib.bin"
    write_blob(blob, size)
    lib = workspace / "src" / "lib.rs"
    lib.write_text(lib.read_text() + _BLOB_ASM.replace("{blob}", str(blob)))
    return workspace


def sidecar_workspace(root: Path, count: int) -> Path:
    """The example plugin with `count` small sidecar files declared."""
    workspace = _copy_template(root / f"plugin-{count}-sidecars")
    helpers = workspace / "helpers"
    helpers.mkdir()
    entries = []
    for number in range(count):
        name = f"side-{number:05d}"
        (helpers / name).write_bytes(os.urandom(256 + number % 1024))
        entries.append(f'  {{ name = "{name}", source = "helpers/{name}" }},\n')
    # one inline array: a `[[plugin.sidecar]]` header per file would pass the TOML reader's
    # limit on dots outside strings (core/tomlread.py)
    declaration = workspace / "horon-release.toml"
    declaration.write_text(declaration.read_text() + "sidecar = [\n" + "".join(entries) + "]\n")
    return workspace


def many_plugins_workspace(root: Path, count: int) -> tuple[Path, list[str]]:
    """One cargo workspace with `count` plugin crates, each its own [[plugin]]."""
    workspace = root / f"workspace-{count}-plugins"
    workspace.mkdir()
    shutil.copy(TEMPLATE / "LICENSE", workspace / "LICENSE")
    template_toml = (TEMPLATE / "Cargo.toml").read_text()
    member_toml = template_toml.split("# Its own workspace root")[0]
    declaration = (TEMPLATE / "horon-release.toml").read_text().split("[[plugin]]")[0]
    plugin_entry = "[[plugin]]" + (TEMPLATE / "horon-release.toml").read_text().split(
        "[[plugin]]")[1]
    members, ids = [], []
    for number in range(1, count + 1):
        plugin_id, package = f"plugin-{number:02d}", f"horon-plugin-{number:02d}"
        member = workspace / "crates" / plugin_id
        member.mkdir(parents=True)
        shutil.copytree(TEMPLATE / "src", member / "src")
        shutil.copy(TEMPLATE / "build.rs", member / "build.rs")
        shutil.copy(TEMPLATE / "LICENSE", member / "LICENSE")
        (member / "Cargo.toml").write_text(member_toml.replace('"horon-example"', f'"{package}"'))
        declaration += plugin_entry.replace('id = "example"', f'id = "{plugin_id}"').replace(
            '"horon-example"', f'"{package}"').replace('name = "Example"',
                                                      f'name = "Plugin {number}"')
        members.append(f'"crates/{plugin_id}"')
        ids.append(plugin_id)
    (workspace / "Cargo.toml").write_text(
        f"[workspace]\nmembers = [{', '.join(members)}]\nresolver = \"2\"\n\n"
        '[profile.release]\npanic = "abort"\ndebug = false\n')
    (workspace / "horon-release.toml").write_text(declaration)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=workspace, check=True,
                   capture_output=True)
    return workspace, ids


def path_crates_workspace(root: Path, count: int, fan_out: int = 3) -> Path:
    """The example plugin depending on `count` path crates of its own workspace, each a tiny
    library depending on up to `fan_out` later ones (a DAG of about `count * fan_out` edges):
    the real graph of a large workspace, every crate compiled by cargo."""
    workspace = _copy_template(root / f"plugin-{count}-crates")
    crates = workspace / "crates"
    for number in range(count):
        name = f"part-{number:05d}"
        later = [f"part-{n:05d}" for n in range(number + 1, min(count, number + 1 + fan_out))]
        member = crates / name
        (member / "src").mkdir(parents=True)
        deps = "".join(f'{d} = {{ path = "../{d}" }}\n' for d in later)
        (member / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
            f'license = "Apache-2.0"\npublish = false\n\n[dependencies]\n{deps}')
        # no calls between the crates: rustc encodes small functions' MIR for inlining across
        # crates, and a chain of calls through a DAG grows the metadata exponentially (2.4 GB
        # at the 30th crate from the end when each called its three successors)
        (member / "src" / "lib.rs").write_text("pub fn value() -> u32 {\n    1\n}\n")
    manifest = workspace / "Cargo.toml"
    text = manifest.read_text().replace(
        "[dependencies]\n", '[dependencies]\npart-00000 = { path = "crates/part-00000" }\n')
    text = text.replace("[workspace]\n", '[workspace]\nmembers = ["crates/*"]\n')
    manifest.write_text(text)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=workspace, check=True,
                   capture_output=True)
    return workspace
