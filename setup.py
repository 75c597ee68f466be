"""Ships the plugin templates and the docs inside the package (pyproject.toml has the rest).

`horon-bundle new` renders from `horon_bundle/templates/` and `horon-bundle docs` reads
`horon_bundle/docs/`; in the repository they live once, at the top level (`templates/`,
`docs/`), so the wheel's build step copies them in. A checkout reads the top-level folders
directly (`horon_bundle.core.shipped`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# build output a checkout may hold inside templates/plugin; never shipped
_SKIP = shutil.ignore_patterns("target", "dist", "__pycache__", "*.pyc", ".*.swp")
# pages for people working on horon-bundle itself (horon_bundle.core.shipped.DEVELOPER_PAGES)
DEVELOPER_PAGES = ("benchmarks.md", "development.md", "mutants.md")
_SKIP_DOCS = shutil.ignore_patterns("__pycache__", ".*.swp", *DEVELOPER_PAGES)


class BuildWithData(build_py):
    def run(self) -> None:
        package = Path(self.build_lib) / "horon_bundle"
        # an earlier build's copy is removed first: a module since removed or renamed in the
        # tree would otherwise be shipped again from build/lib
        shutil.rmtree(package, ignore_errors=True)
        super().run()
        for name in ("templates", "docs"):
            source, target = ROOT / name, package / name
            if source.is_dir():  # building from a tree without them fails the check in nox
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(source, target, ignore=_SKIP_DOCS if name == "docs" else _SKIP)


# the manual page (generated from the parser: python -m tests.man_page) where man finds it
# beside the installed command: <prefix>/share/man/man1 (a venv, pipx, --user, /usr/local)
setup(cmdclass={"build_py": BuildWithData},
      data_files=[("share/man/man1", ["docs/man/horon-bundle.1"])])
