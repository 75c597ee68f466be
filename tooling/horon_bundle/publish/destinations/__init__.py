"""Where bundles go, behind one interface (`interface.Destination`, with the address it is
opened from): a `file://` store (`file_store`, copying through `store_copy`) and an OCI
registry (`oci_registry`, over `oci_client`, `oci_layout` and `oci_referrers`);
`connect.open_destination` opens the one an address names, importing only that one."""
