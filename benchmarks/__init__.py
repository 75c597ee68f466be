"""`nox -s bench`: every row of issue 13's table, measured as a ratio against its baseline."""
