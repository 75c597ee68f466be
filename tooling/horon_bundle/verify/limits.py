"""The verifier's limits on a bundle's shape and sizes, shared by the directory walk and the
archive reader, and the policies of the one tree reader (`core.tree`).

Native bundles are small: a library, a licence, a few metadata files and sidecars. Each limit
is far above what a real bundle needs and is checked before the work it bounds. The caps of
each file a bundle holds (plugin.json, SHA256SUMS, provenance …) stay with their decoders in
`model/`, which cannot import the verifier; docs/limits.md lists every limit of the package.
A harness plugin workspace is a tree of its own kind (`harness_tree`): real plugins vendor
node_modules and carry many skills, so its limits are sized for those, not for a bundle; so
are a harness bundle's, zip or unpacked (`harness_bundle_tree`). The readers choose them from
what they know before the work (a zip's end record, a directory's root names) and keep them
only for a harness bundle (`harness_shaped`): anything else is judged as a native bundle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container

from horon_bundle.core import codes
from horon_bundle.core.paths import MAX_PATH_BYTES
from horon_bundle.core.tree_policy import TreeCodes, TreePolicy

# both bundle forms
MAX_ENTRIES = 10_000            # files (and directories) in a bundle
MAX_NAME_BYTES = MAX_PATH_BYTES  # UTF-8 bytes of one relative path
MAX_DEPTH = 32                  # directory levels below the bundle root

# archives
MAX_ARCHIVE_BYTES = (1 << 31) - 1   # the archive file; beyond it zipfile would need ZIP64
MAX_ENTRY_BYTES = 1900 << 20        # one entry, uncompressed (zipfile writes ZIP64 past ~1950 MiB)
MAX_TOTAL_BYTES = 8 << 30           # all entries together, uncompressed
MAX_RATIO = 1000                    # one entry above 1 MiB: uncompressed / compressed
RATIO_FLOOR = 1 << 20
MAX_TOTAL_RATIO = 100               # all entries together above 64 MiB: uncompressed / archive
TOTAL_RATIO_FLOOR = 64 << 20
# one central-directory record: 46 bytes and its name (the format has no extra field, no comment)
MAX_RECORD_BYTES = 46 + MAX_NAME_BYTES
MAX_CENTRAL_DIRECTORY_BYTES = MAX_ENTRIES * MAX_RECORD_BYTES
MAX_LISTED = 100                    # pairs of entries that collide listed (no more looked for)

# harness plugin workspaces (and each plugin a marketplace lists), walked by `build`
HARNESS_MAX_ENTRIES = 100_000          # files, directories and links, a followed link's too
HARNESS_MAX_DEPTH = 64                 # directory levels below the plugin root
HARNESS_MAX_FILE_BYTES = 512 << 20     # one file (a vendored native binary fits)
HARNESS_MAX_TOTAL_BYTES = 4 << 30      # all files together, as bundled (links count each time)

# harness bundles: the zip build wrote (read with the archive's limits above, but these entries,
# a central directory of as many records, and `harness_bundle_tree`'s depth and entries unpacked)
# and that zip unpacked (`harness_bundle_tree`). A zip without ZIP64 counts its entries in 16
# bits, and 0xFFFF is ZIP64's marker (refused: no reader of ours accepts ZIP64)
HARNESS_MAX_ARCHIVE_ENTRIES = 0xFFFF - 1
# what makes a bundle a harness bundle for the readers, by content and before any judge: the
# root files build writes beside the plugin (`model/harness/layout.py: REQUIRED`, which the
# readers may not import), and no native plugin.json
HARNESS_ROOT_FILES = ("SHA256SUMS", "catalogue.json", "provenance.json")
NATIVE_MANIFEST = "plugin.json"


def harness_shaped(names: Container[str]) -> bool:
    """Whether a bundle holding these root files is a harness bundle, as the judges route it
    (`model/harness/layout.py: is_harness`), with every root file build writes: only then do
    its harness limits stand. A native bundle holds plugin.json, so it never is."""
    return NATIVE_MANIFEST not in names and all(name in names for name in HARNESS_ROOT_FILES)


def bundle_tree() -> TreePolicy:
    """A bundle directory: no link, one link per file, safe modes, no empty directory; the
    same entry, depth, path and size limits as the bundle's archive."""
    return TreePolicy(
        max_entries=MAX_ENTRIES, max_depth=MAX_DEPTH, max_path_bytes=MAX_NAME_BYTES,
        max_file_bytes=MAX_ENTRY_BYTES, max_total_bytes=MAX_TOTAL_BYTES, follow_links=False,
        codes=TreeCodes(limit=codes.LAYOUT_LIMIT, link=codes.LAYOUT_SYMLINK,
                        loop=codes.LAYOUT_SYMLINK, hard_link=codes.LAYOUT_FILE_TYPE,
                        file_type=codes.LAYOUT_FILE_TYPE, changed=codes.LAYOUT_CHANGED,
                        mode=codes.LAYOUT_MODE, empty_directory=codes.LAYOUT_UNDECLARED))


def harness_bundle_tree() -> TreePolicy:
    """An unpacked harness bundle (`verify DIR`, fetch's staging): a bundle directory's rules,
    with the entries and depth of the plugin tree it was built from; its zip is held to the
    same depth and, unpacked, to the same entries (`verify.reading.archive_entries`)."""
    return dataclasses.replace(bundle_tree(), max_entries=HARNESS_MAX_ENTRIES,
                               max_depth=HARNESS_MAX_DEPTH)


def harness_tree() -> TreePolicy:
    """A harness plugin workspace: links inside the plugin root followed (the host follows
    them when it copies a plugin), `.git` never entered, modes left to the zip writer."""
    return TreePolicy(
        max_entries=HARNESS_MAX_ENTRIES, max_depth=HARNESS_MAX_DEPTH,
        max_path_bytes=MAX_NAME_BYTES, max_file_bytes=HARNESS_MAX_FILE_BYTES,
        max_total_bytes=HARNESS_MAX_TOTAL_BYTES, follow_links=True,
        codes=TreeCodes(limit=codes.HARNESS_TREE_LIMIT, link=codes.HARNESS_PATH_UNSAFE,
                        loop=codes.HARNESS_LINK_LOOP, hard_link=codes.HARNESS_HARD_LINK,
                        file_type=codes.HARNESS_FILE_TYPE, changed=codes.HARNESS_CHANGED),
        skip_names=frozenset({".git"}), during="while the plugin was read")
