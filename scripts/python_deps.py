"""Installs the Python dependencies pyproject.toml names (and its `test` extra) into this
interpreter's environment, with pip.

`make install` runs this in the background while cargo compiles the Rust core, then runs
`maturin develop`, which finds every requirement already satisfied. maturin alone installs them
first and compiles after: pip waits mostly on the package index (130 s for these on this
machine with a warm wheel cache, 41 s of it CPU), so the two one after the other added pip's
whole time to `make test`.

    python scripts/python_deps.py [--extra NAME ...]
"""

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path


def requirements(extras: list[str]) -> list[str]:
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())[
        "project"
    ]
    reqs = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            sys.exit(f"python_deps.py: pyproject.toml has no optional dependencies named {extra!r}")
        reqs += optional[extra]
    return reqs


def main() -> None:
    parser = argparse.ArgumentParser(description="Install pyproject.toml's dependencies with pip.")
    parser.add_argument("--extra", action="append", default=[], help="an optional group too")
    extras = parser.parse_args().extra
    pip = [sys.executable, "-m", "pip", "install", "-q", *requirements(extras)]
    sys.exit(subprocess.call(pip))


if __name__ == "__main__":
    main()
