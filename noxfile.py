"""Developer and CI sessions. `nox -s bundle` is the plugin author's one command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["bundle", "tests", "lint"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
EXAMPLE = ROOT / "templates" / "plugin"
DIST = ROOT / "dist"
# what the test suite runs besides Python: command -> the Debian package that provides it
SYSTEM_TOOLS = {
    "git": "git", "sha256sum": "coreutils", "strace": "strace", "unshare": "util-linux",
    "setarch": "util-linux", "prlimit": "util-linux", "docker-registry": "docker-registry",
    "llvm-mc": "llvm", "objcopy": "binutils", "skopeo": "skopeo", "npm": "npm",
    "nsenter": "util-linux", "openssl": "openssl", "go": "golang-go",
    "time": "time",
}
# what the tests need that is not a command: a path -> the Debian package that provides it
SYSTEM_FILES = {
    "/usr/share/gocode/src/golang.org/x/mod/sumdb/tlog": "golang-golang-x-mod-dev",
}


@nox.session
def bundle(session: nox.Session) -> None:
    """Build, verify and archive a plugin bundle (default: the built-in example plugin).

    `nox -s bundle -- PATH [build options]` bundles the workspace at PATH instead.
    """
    session.install(".")
    workspace = session.posargs[0] if session.posargs else str(EXAMPLE)
    extra = session.posargs[1:]
    session.run("horon-bundle", "build", workspace, "--out", str(DIST), *extra)
    archives = sorted(DIST.glob("*.zip"), key=lambda p: p.stat().st_mtime)
    if archives:
        session.run("horon-bundle", "verify", str(archives[-1]))


def missing_tools() -> tuple[list[str], list[str]]:
    """(missing commands, the Debian packages that provide them); cargo is its own line."""
    missing = [tool for tool in SYSTEM_TOOLS if shutil.which(tool) is None]
    absent = [path for path in SYSTEM_FILES if not Path(path).is_dir()]
    packages = sorted({SYSTEM_TOOLS[tool] for tool in missing}
                      | {SYSTEM_FILES[path] for path in absent})
    return missing + absent, packages


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (real cargo builds; pass pytest options after --) on every core
    (pytest-xdist, `-n auto` unless you pass `-n`) under coverage, child processes included
    (pyproject: [tool.coverage]); print the combined figure last. The quick loop:
    `nox -s tests -- -m "not slow"`.

    Stops before installing or running anything when a system tool the tests use is missing,
    naming every one and the one command that installs them (`.ci/run` does it for you).
    """
    missing, packages = missing_tools()
    if shutil.which("cargo") is None:
        missing.append("cargo")
    if missing:
        lines = [f"missing: {', '.join(missing)}"]
        if packages:
            lines.append(f"install with: sudo apt-get install -y {' '.join(packages)}"
                         "   (or run .ci/run, which installs them and then the tests)")
        if "cargo" in missing:
            lines.append("and Rust: https://rustup.rs (cargo on PATH)")
        session.error("\n".join(lines))
    session.install(".[test]")
    session.run("coverage", "erase")
    parallel = [] if any(arg.startswith(("-n", "--numprocesses", "--dist")) or arg == "no:xdist"
                         for arg in session.posargs) else ["-n", "auto"]
    try:
        session.run("coverage", "run", "-m", "pytest", *parallel, *session.posargs)
    finally:
        session.run("coverage", "combine", "--quiet")
        session.run("coverage", "report")
        total = session.run("coverage", "report", "--format=total", silent=True)
        session.log(f"coverage, every process the tests started included: {str(total).strip()}%")


LINT_CHECKS = ("ruff", "mypy", "imports")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict and the import-layer contracts (docs/architecture.md).

    `nox -s lint -- ruff` (or `mypy`, `imports`) runs one of them: the pre-commit hooks
    (.pre-commit-config.yaml) run each this way, so a commit is checked exactly as CI checks.
    """
    chosen = session.posargs or list(LINT_CHECKS)
    unknown = sorted(set(chosen) - set(LINT_CHECKS))
    if unknown:
        session.error(f"unknown check {', '.join(unknown)}: choose from {', '.join(LINT_CHECKS)}")
    session.install("-e", ".[test]", "ruff", "mypy", "nox", "import-linter",  # -e: lint-imports
                    "mutmut==3.8.1")  # reads this tree; mypy checks tests/mutants against mutmut
    if "ruff" in chosen:
        session.run("ruff", "check", "tooling", "tests", "benchmarks", "noxfile.py", "setup.py",
                    "templates/plugin/noxfile.py")
    if "mypy" in chosen:
        session.run("mypy", "--strict", "tooling", "tests", "noxfile.py")
        session.run("mypy", "--strict", "templates/plugin/noxfile.py")  # another `noxfile`
    if "imports" in chosen:
        session.run("lint-imports")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The speed table as ratios against baselines measured in the same run; writes
    docs/benchmarks.md. Fails when a publish target is missed. About 10 minutes; a short
    run: `nox -s bench -- --sizes 1,100 --quick --out /tmp/bench.md`."""
    session.install("-e", ".[test]")  # -e: the bench times this tree's horon-bundle
    session.run("python", "-m", "benchmarks.run", *session.posargs)


def _shipped_files() -> list[str]:
    """Every file of templates/ and docs/ the package must carry (as git tracks them)."""
    listed = subprocess.run(["git", "ls-files", "templates", "docs"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split()
    return sorted(listed)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """Property tests of the untrusted-input readers with the large budget (the `fuzz`
    Hypothesis profile: 20,000 examples per property; docs/threat-model.md, "Fuzz budget").

    `nox -s fuzz -- -k archive` narrows it; Hypothesis keeps failing examples in .hypothesis/.
    """
    session.install(".[test]")
    session.run("pytest", "tests/core/test_properties.py", "-p", "no:cacheprovider",
                *session.posargs, env={"HORON_HYPOTHESIS_PROFILE": "fuzz"})


@nox.session(default=False)
def mutants(session: nox.Session) -> None:
    """Mutation testing (mutmut) of the modules holding the critical checks, judged by tests
    that run the mutated code in their own process (tests/mutants/, docs/development.md).

    Writes docs/mutants.md and the kill-ratio block of docs/threat-model.md; fails under the
    plan's kill ratio or on a surviving mutant without a reviewed reason. `nox -s mutants --
    core/paths.py 'verify/*'` tests the untested mutants of some modules, `-- --resume`
    re-tests those an earlier run left alive, `-- --report` reports what build/mutants/ holds
    (tests/mutants/run.py).
    """
    # -e: the tests' subprocesses import this tree; pinned: tests/mutants/filters.py edits
    # that version's operator table
    session.install("-e", ".[test]", "mutmut==3.8.1")
    session.run("python", "-m", "tests.mutants.run", *session.posargs)


@nox.session(name="host-diff", default=False)
def host_diff(session: nox.Session) -> None:
    """The differential against the pinned Claude Code over any plugin or marketplace
    directories: `nox -s host-diff -- DIR...` puts each DIR to `claude plugin validate --json`
    and to `build`/`verify --host claude-code@<pinned>`, prints one table row each, and fails
    where this toolchain falls below the host's verdict (tests/host_diff.py). For a checkout
    of anthropics/claude-code: `nox -s host-diff -- path/to/claude-code/plugins/*/`."""
    if not session.posargs:
        session.error("name the plugin directories: nox -s host-diff -- DIR...")
    session.install("-e", ".[test]")  # -e: judged by this tree's horon-bundle
    session.run("python", "-m", "tests.host_diff", *session.posargs)


@nox.session(name="host-profile", default=False)
def host_profile(session: nox.Session) -> None:
    """Rewrite the shipped claude-code profile's event lists from the pinned CLI (the
    HOOK_EVENTS its binary embeds; tests/host_profile.py): run it when CLAUDE_CODE_VERSION in
    tests/claude_host.py moves, with the differential table and the schemas (docs/development.md).
    `nox -s host-profile -- PATH` reads another CLI binary."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "tests.host_profile", *session.posargs)


@nox.session(default=False)
def dist(session: nox.Session) -> None:
    """Build our sdist and wheel; check them with twine and for the templates, docs and the
    manual page; then install the wheel into a fresh virtualenv outside the repository and
    run `new` → `build` → `verify` → `inspect` there, as a plugin author would, and the
    README's first-plugin block as written under a fresh HOME (no git identity)."""
    out = ROOT / "build" / "dist"
    shutil.rmtree(out, ignore_errors=True)
    session.install("build", "twine")
    session.run("python", "-m", "build", "--outdir", str(out))
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist in {out}")
    session.run("twine", "check", "--strict", str(wheels[0]), str(sdists[0]))
    wanted = _shipped_files()
    with zipfile.ZipFile(wheels[0]) as wheel:
        in_wheel = set(wheel.namelist())
    with tarfile.open(sdists[0]) as sdist:
        root = sdist.getnames()[0].split("/", 1)[0]
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    developer = {f"docs/{page}" for page in ("benchmarks.md", "development.md", "mutants.md")}
    lacking = [f"wheel: {name}" for name in wanted
               if f"horon_bundle/{name}" not in in_wheel and name not in developer]
    lacking += [f"sdist: {name}" for name in wanted if name not in in_sdist]
    stray = [f"wheel: horon_bundle/{name} (a developer page)" for name in sorted(developer)
             if f"horon_bundle/{name}" in in_wheel]
    stray += [name for name in in_wheel | in_sdist
             if "/target/" in name or name.startswith(("templates/plugin/dist/",
                                                       "horon_bundle/templates/plugin/dist/"))]
    # the wheel's modules are the tree's, no more (an earlier build's leftovers): no fewer
    modules = {f"horon_bundle/{p.relative_to(ROOT / 'tooling' / 'horon_bundle').as_posix()}"
               for p in (ROOT / "tooling" / "horon_bundle").rglob("*.py")}
    shipped = {name for name in in_wheel if name.endswith(".py")
               and not name.startswith(("horon_bundle/templates/", "horon_bundle/docs/"))}
    stray += [f"wheel: {name} (not in the tree)" for name in sorted(shipped - modules)]
    man = ".data/data/share/man/man1/horon-bundle.1"  # under horon_bundle-<version>
    if not any(name.endswith(man) for name in in_wheel):
        lacking.append(f"wheel: horon_bundle-*{man} (the manual page)")
    lacking += [f"wheel: {name}" for name in sorted(modules - shipped)]
    if lacking or stray:
        session.error("\n".join(["package contents are wrong:", *lacking, *stray]))
    session.log(f"{wheels[0].name} and {root}.tar.gz carry {len(wanted)} template/doc files")
    with tempfile.TemporaryDirectory(prefix="horon-dist-") as scratch:
        place = Path(scratch)
        venv = place / "venv"
        session.run("python", "-m", "venv", str(venv))
        bindir = venv / ("Scripts" if sys.platform == "win32" else "bin")
        session.run(str(bindir / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", str(wheels[0]), external=True)
        tool = str(bindir / "horon-bundle")
        work = place / "work"
        work.mkdir()
        plugin = work / "acme-notes"
        bundle = f"dist/acme-notes-0.1.0-{_host_target(session)}"
        with session.chdir(work):
            session.run(tool, "new", "acme-notes", external=True)
        with session.chdir(plugin):
            session.run(tool, "build", external=True)
            session.run(tool, "verify", f"{bundle}.zip", external=True)
            session.run(tool, "inspect", f"{bundle}.zip", external=True)
            session.run(tool, "docs", "getting-started", external=True, silent=True)
            session.run(tool, "completion", "bash", external=True, silent=True)
        page = venv / "share" / "man" / "man1" / "horon-bundle.1"
        if not page.is_file() or not page.read_text().startswith(".TH HORON"):
            session.error(f"the installed wheel has no manual page at {page}")
        _run_readme_first_plugin(session, place, bindir)


def _readme_first_plugin() -> str:
    """The README's first-plugin commands (the run block after its heading), as written."""
    text = (ROOT / "README.md").read_text().split("## Your first plugin", 1)[1]
    return text.split("<!-- doc-test: run -->\n```sh\n", 1)[1].split("```", 1)[0]


def _run_readme_first_plugin(session: nox.Session, place: Path, bindir: Path) -> None:
    """The README's first-plugin block, as a newcomer runs it: the installed wheel first on
    PATH, a fresh HOME (no git identity, no configuration; rustup's toolchains where they
    are), in an empty directory; only the target triple is this machine's."""
    home, work = place / "home", place / "readme"
    home.mkdir()
    work.mkdir()
    real_home = Path.home()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "HORON_", "CARGO_TARGET_DIR", "SOURCE_DATE_EPOCH"))
           and k not in ("EMAIL", "NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1",
               PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
               RUSTUP_HOME=os.environ.get("RUSTUP_HOME", str(real_home / ".rustup")),
               CARGO_HOME=os.environ.get("CARGO_HOME", str(real_home / ".cargo")))
    script = _readme_first_plugin().replace("x86_64-unknown-linux-gnu", _host_target(session))
    session.log("README: the first-plugin block, under a fresh HOME")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=1200, check=False)
    if done.returncode != 0:
        session.error(f"the README's first-plugin block failed:\n{script}\n---\n"
                      f"{done.stdout}\n{done.stderr}")


def _host_target(session: nox.Session) -> str:
    verbose = session.run("rustc", "-vV", external=True, silent=True)
    assert isinstance(verbose, str)
    return next(line.split(": ", 1)[1] for line in verbose.splitlines()
                if line.startswith("host: "))


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run with nox")
