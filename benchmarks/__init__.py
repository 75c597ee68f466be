"""`nox -s bench`: every row of the speed table, measured as a ratio against its baseline."""
