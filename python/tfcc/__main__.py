"""``python -m tfcc``: the ``tfcc`` command where the venv's scripts directory is not on PATH.

Only :mod:`tfcc.entry` is imported before its ``main`` starts, so Ctrl-C while the heavy
modules load is caught there (exit 130, no traceback), as for the console script; ``python -m
tfcc.cli`` imports typer and rich first, outside that guard.
"""

from tfcc.entry import main

if __name__ == "__main__":
    main()
