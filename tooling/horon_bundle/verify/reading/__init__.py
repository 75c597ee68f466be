"""Reading a bundle as `verify` judges it: one interface (`interface.BundleSource`) over a
directory walked through descriptors (`directory`) or an archive validated before any entry
is read (`archive_reader`, `archive_entries`, `archive_stream`, `archive_hasher`,
`archive_source`); `open.open_bundle` picks one by what the path is."""
