"""The new user's first commands keep working: every `tfcc ...` line of the shell blocks in
README.md, docs/scenarios.md, docs/sweeps.md and docs/reproductions/README.md parses with its
subcommand's own parser (nothing runs), every message quoted in docs/scenarios.md's "Errors"
section is, byte for byte, what `tfcc run` and `tfcc check` print for the file it implies, and
every repository path those pages name in inline code exists.

These are the facts that went stale unnoticed: a flag renamed in the code while the README kept
the old spelling, an error message reworded while the docs kept quoting the old one. Running
the commands themselves takes minutes and root (the testbed ones); parsing them takes
milliseconds. The commands that hand over to Rust (`run`, `send`, `recv`) are given a trailing
`--help`: clap reads every argument before it with its parser (an unknown flag, a missing
value or a bad typed value is an error) and stops at `--help` before it requires anything or
touches a file.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer

from tfcc import ScenarioError, _core, check_scenario
from tfcc.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/scenarios.md", "docs/sweeps.md", "docs/reproductions/README.md"]
NATIVE = ROOT / "python" / "tfcc" / "_bin" / "tfcc-run"


def documented_commands() -> list[tuple[str, list[str]]]:
    """(where, argv after `tfcc`) of each `tfcc` line in a ```sh block, continuation lines
    joined, the comment and anything after a pipe dropped. A `...` argument is the README's
    "the same command": the arguments of the block's previous line of that subcommand."""
    out = []
    for doc in DOCS:
        last: dict[str, list[str]] = {}
        text = (ROOT / doc).read_text(encoding="utf-8")
        for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
            for line in block.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words[:1] == ["sudo"]:
                    words = words[1:]
                if not words or words[0] not in ("tfcc", ".venv/bin/tfcc"):
                    continue
                if "|" in words:
                    words = words[: words.index("|")]
                command, args = words[1], words[2:]
                if "..." in args:
                    i = args.index("...")
                    args = args[:i] + last[command] + args[i + 1 :]
                last[command] = args
                out.append((f"{doc}: {line.strip()[:70]}", [command, *args]))
    return out


COMMANDS = documented_commands()


def test_the_docs_show_commands() -> None:
    # the extraction itself: an edit that changed the blocks' fences would otherwise leave
    # nothing to check and pass
    subcommands = {argv[0] for _, argv in COMMANDS}
    assert {"run", "check", "sweep", "send", "recv", "reproduce", "query"} <= subcommands
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("argv", [a for _, a in COMMANDS], ids=[w for w, _ in COMMANDS])
def test_every_documented_command_parses(argv: list[str], capfd: pytest.CaptureFixture) -> None:
    command, args = argv[0], argv[1:]
    if command == "run":
        code = _core.cli_run([*args, "--help"], None)
    elif command in ("send", "recv"):
        code = _core.cli_net(command, [*args, "--help"])
    else:
        # typer's own click: make_context parses and converts every argument, then stops
        sub = getattr(typer.main.get_command(app), "commands", {}).get(command)
        assert sub is not None, f"no subcommand {command}"
        try:
            sub.make_context(command, list(args))
        except typer.TyperException as e:
            pytest.fail(f"tfcc {shlex.join(argv)}: {e.format_message()}")
        code = 0
    err = capfd.readouterr().err
    assert code == 0, f"tfcc {shlex.join(argv)}: {err}"


# --- docs/scenarios.md, "Errors" ---

BASE = """duration = "100s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms" }
[[flows]]
protocol = "tcp-sack"
"""

CUSTOM = """duration = "10s"
[topology]
kind = "custom"
nodes = ["a", "b", "c"]
links = [
  { name = "ab", from = "a", to = "b", rate = "10Mbps", delay = "5ms" },
  { name = "ba", from = "b", to = "a", rate = "10Mbps", delay = "5ms" },
]
[[flows]]
protocol = "cbr"
rate = "1Mbps"
route = ["a", "c"]
"""

#: The file (and --set) each quoted message implies, keyed by the message's start after
#: `error: s.toml: `; every quoted line must have one.
CASES: dict[str, tuple[str, list[str]]] = {
    "topology.bottleneck.rate:": (BASE.replace('"10Mbps"', '"20ms"'), []),
    "topology.bottleneck.dealy:": (BASE.replace('delay = "20ms"', 'dealy = "20ms"'), []),
    "flows[0].protocol:": (BASE.replace("tcp-sack", "tcp-vegas"), []),
    "topology.bottleneck.delay:": (BASE.replace('"20ms"', '"-5ms"'), []),
    "duration:": (BASE.replace('duration = "100s"\n', ""), []),
    "measure_from:": ('measure_from = "200s"\n' + BASE, []),
    "invalid TOML": ('duration = "100s"\n[topology\nkind = "dumbbell"\n', []),
    "--set flows.4.count=2:": (BASE, ["flows.4.count=2"]),
    "flows[0].count:": (BASE + "count = -1\n", []),
    "flows[0].route:": (CUSTOM, []),
}


def quoted_errors() -> list[str]:
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```\n(.*?)^```", section, re.S | re.M)
    assert block is not None, "docs/scenarios.md's Errors section has no message block"
    return block.group(1).splitlines()


def matches(quoted: str, printed: str) -> bool:
    """`printed` is `quoted`, where the docs' `...` stands for the rest of a list (the text
    before it a prefix, the text after it the end)."""
    if "..." not in quoted:
        return printed == quoted
    head, tail = quoted.split("...", 1)
    return printed.startswith(head) and printed.endswith(tail) and len(printed) >= len(quoted) - 3


def case(line: str) -> tuple[str, list[str]]:
    assert line.startswith("error: s.toml: "), line
    rest = line.removeprefix("error: s.toml: ")
    keys = [k for k in CASES if rest.startswith(k)]
    assert len(keys) == 1, f"no file for the quoted message {line!r}: add one to CASES"
    return CASES[keys[0]]


def test_every_quoted_error_has_a_case() -> None:
    lines = quoted_errors()
    assert len(lines) >= 5
    for line in lines:
        case(line)


@pytest.mark.parametrize("line", quoted_errors())
def test_every_quoted_error_is_what_tfcc_prints(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml, sets = case(line)
    (tmp_path / "s.toml").write_text(toml)
    # `tfcc run` (the native command, as the console script runs it), from the file's directory
    # so that its name is `s.toml` as quoted
    argv = [str(NATIVE), "s.toml", "--out", "out", *(x for s in sets for x in ("--set", s))]
    r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and matches(line, r.stderr.rstrip("\n")), (
        f"docs/scenarios.md quotes\n  {line}\n`tfcc run` prints\n  {r.stderr}"
    )
    assert not (tmp_path / "out").exists()
    # `tfcc check` reports the same error (it prints `error: ` and the exception's text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as e:
        check_scenario(Path("s.toml"), sets)
    printed = f"error: {e.value}"
    assert matches(line, printed), f"docs/scenarios.md quotes\n  {line}\n`tfcc check`\n  {printed}"


# --- paths named in the docs' inline code ---

#: A repository path in inline code: a top-level directory of the clone, then a path; `*` and
#: upper-case placeholders (`NAME`) stand for any name, and at least one file must match.
REPO_PATH = re.compile(
    r"(?<![\w./-])(?:\.ci|bench|crates|docs|python|scenarios|scripts|tests|tools)/[\w./*-]*[\w*]"
)


def named_paths() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for code in re.findall(r"`([^`\n]+)`", text):
            out += [(doc, m.group(0)) for m in REPO_PATH.finditer(code)]
    return out


def test_every_path_named_in_the_docs_exists() -> None:
    # test_docs_links.py checks the Markdown links; the docs name many more files in inline
    # code (`crates/tfcc-run/src/pcap.rs`, `tests/test_pcap.py`), which move as code is split
    paths = named_paths()
    assert len(paths) >= 50
    missing = [
        f"{doc}: {path}"
        for doc, path in paths
        if not any(ROOT.glob(re.sub(r"\b[A-Z]{2,}\b", "*", path)))
    ]
    assert missing == []
