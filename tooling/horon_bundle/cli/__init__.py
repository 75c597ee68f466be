"""The command-line shell: parses arguments, calls one stage, renders its result."""
