"""The verifier's limits on a bundle's shape and sizes, shared by the directory walk and the
archive reader.

Bundles are small: a library, a licence, a few metadata files and sidecars. Each limit is far
above what a real bundle needs and is checked before the work it bounds. The caps of each
file a bundle holds (plugin.json, SHA256SUMS, provenance …) stay with their decoders in
`model/`, which cannot import the verifier; docs/limits.md lists every limit of the package.
"""

from __future__ import annotations

from horon_bundle.core.paths import MAX_PATH_BYTES

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
