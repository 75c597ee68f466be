"""Installing bundles into an agent home the way the host does (docs/install.md).

The kind-neutral core — the descriptor walk (`dirs`), the home's lock (`lock`), staging and
the no-replace commit (`staging`), the state file and its atomic replacement (`state`,
`statefile`) — knows nothing of native bundles; `installer`, `manage` and `survey` apply it to
native plugins under `native-plugins/<id>/<version>/<target>`. POSIX only.
"""
