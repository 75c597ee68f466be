"""What `new` renders: every file of a new plugin workspace, from the shipped templates.

`templates/plugin/` is itself a plain, buildable crate (the example plugin, id `example`,
package `horon-example`) that `nox -s bundle` builds as it is; a new workspace is that crate
with its names substituted, in one pass (so a NAME containing `example` is never substituted
twice), plus the C header, a release workflow, and the chosen licence. The plugin id is then
written in one place only, the `id` in `horon-release.toml` (the template's build.rs reads it
from there), so a rename is one edit.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass

LICENSES = ("Apache-2.0", "MIT")

# rendered path -> template path (relative to the shipped templates folder)
FILES: dict[str, str] = {
    ".gitignore": "plugin/.gitignore",
    "Cargo.toml": "plugin/Cargo.toml",
    "Cargo.lock": "plugin/Cargo.lock",
    "build.rs": "plugin/build.rs",
    "horon-release.toml": "plugin/horon-release.toml",
    "README.md": "plugin/README.md",
    "noxfile.py": "plugin/noxfile.py",
    "src/abi.rs": "plugin/src/abi.rs",
    "src/json.rs": "plugin/src/json.rs",
    "src/lib.rs": "plugin/src/lib.rs",
    "src/plugin.rs": "plugin/src/plugin.rs",
    "src/section.rs": "plugin/src/section.rs",
    "include/horon_plugin_abi_v1.h": "include/horon_plugin_abi_v1.h",
    ".github/workflows/release.yml": "github/release.yml",
}
LICENSE_TEMPLATES = {"Apache-2.0": "plugin/LICENSE", "MIT": "licenses/MIT"}
# the words of the example that name it, replaced wherever they appear as names: `example`
# also in `example__whoami` and `example-0.1.0-…`, never inside another word (`examples`)
_WORDS = re.compile(r"horon-example|horon_example|(?<![\w-])example(?![A-Za-z0-9])|"
                    r"(?<![\w-])Example(?![A-Za-z0-9])|(?<![\w-])Apache-2\.0(?![\w.-])")


@dataclass(frozen=True, slots=True, kw_only=True)
class Names:
    plugin_id: str
    package: str
    display: str
    license: str

    @property
    def crate(self) -> str:
        return self.package.replace("-", "_")


def names_for(plugin_id: str, license_id: str) -> Names:
    display = " ".join(part.capitalize() for part in plugin_id.split("-") if part)
    return Names(plugin_id=plugin_id, package=plugin_id, display=display, license=license_id)


def substitute(text: str, names: Names) -> str:
    table: Mapping[str, str] = {
        "horon-example": names.package, "horon_example": names.crate,
        "example": names.plugin_id, "Example": names.display, "Apache-2.0": names.license,
    }
    return _WORDS.sub(lambda match: table[match.group(0)], text)


def license_text(template: str, names: Names, *, year: int | None = None) -> str:
    """The licence file: Apache-2.0 as it is, MIT with its copyright line filled in."""
    when = year if year is not None else datetime.datetime.now(datetime.timezone.utc).year
    return template.replace("<year>", str(when)).replace(
        "<copyright holders>", f"the {names.display} authors")
