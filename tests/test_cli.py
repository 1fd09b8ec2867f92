"""The command line: help, version, and clean usage errors (exit 2, no traceback)."""

from __future__ import annotations

import subprocess
import sys

import tfcc


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_version_prints_the_package_version() -> None:
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"tfcc {tfcc.__version__}"


def test_help_lists_the_commands() -> None:
    r = run_cli("--help")
    assert r.returncode == 0
    assert "demo" in r.stdout


def test_an_unknown_command_exits_2_without_a_traceback() -> None:
    r = run_cli("no-such-command")
    assert r.returncode == 2
    assert "No such command" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_bad_option_value_exits_2_without_a_traceback() -> None:
    r = run_cli("demo", "--rtt-ms", "-5")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
