"""The verifier's limits on a bundle's shape and sizes, shared by the directory walk and the
archive reader, and the policies of the one tree reader (`core.tree`).

Bundles are small: a library, a licence, a few metadata files and sidecars. Each limit is far
above what a real bundle needs and is checked before the work it bounds. The caps of each
file a bundle holds (plugin.json, SHA256SUMS, provenance …) stay with their decoders in
`model/`, which cannot import the verifier; docs/limits.md lists every limit of the package.
A harness plugin workspace is a tree of its own kind (`harness_tree`): real plugins vendor
node_modules and carry many skills, so its limits are sized for those, not for a bundle.
"""

from __future__ import annotations

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
# one record is at least 46 bytes plus its name; nothing else may be in the central directory
MAX_CENTRAL_DIRECTORY_BYTES = MAX_ENTRIES * (46 + MAX_NAME_BYTES)

# harness plugin workspaces (and each plugin a marketplace lists), walked by `build`
HARNESS_MAX_ENTRIES = 100_000          # files, directories and links, a followed link's too
HARNESS_MAX_DEPTH = 64                 # directory levels below the plugin root
HARNESS_MAX_FILE_BYTES = 512 << 20     # one file (a vendored native binary fits)
HARNESS_MAX_TOTAL_BYTES = 4 << 30      # all files together, as bundled (links count each time)


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
