"""`nox -s mutants`: mutation testing of the modules that hold the critical checks (mutmut).

`plan.toml` names the modules and the in-process test files; `survivors.toml` gives the
reviewed reason of every mutant the tests leave alive; `run.py` runs mutmut and writes the
report (docs/mutants.md and the kill-ratio block of docs/threat-model.md) from its results.
"""
