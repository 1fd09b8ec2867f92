"""The command line: help, version, and clean usage errors (exit 2, no traceback)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import tfcc

ENTRY = [sys.executable, "-m", "tfcc.entry"]


def _free_udp_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_recv(port: int, duration: str, *extra: str) -> subprocess.Popen[str]:
    """`tfcc recv` on loopback ``port`` with piped text output (the caller kills it)."""
    return subprocess.Popen(
        [*ENTRY, "recv", "--listen", f"127.0.0.1:{port}", "--duration", duration, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _send(port: int, duration: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """`tfcc send` to loopback ``port`` until it ends, its output captured as text."""
    return subprocess.run(
        [*ENTRY, "send", f"127.0.0.1:{port}", "--duration", duration, *extra],
        capture_output=True,
        text=True,
        timeout=30,
    )


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_version_prints_the_package_version() -> None:
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"tfcc {tfcc.__version__}"


def test_python_dash_m_tfcc_is_the_tfcc_command() -> None:
    # for a venv whose scripts directory is not on PATH; `run` goes to the native runner there too
    r = subprocess.run(
        [sys.executable, "-m", "tfcc", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (r.returncode, r.stdout.strip()) == (0, f"tfcc {tfcc.__version__}"), r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "tfcc", "run", "no-such-file.toml", "--out", "unused"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0
    assert "no-such-file.toml" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_help_lists_the_commands() -> None:
    r = run_cli("--help")
    assert r.returncode == 0
    for command in (
        "demo",
        "run",
        "check",
        "reproduce",
        "sweep",
        "query",
        "report",
        "send",
        "recv",
    ):
        assert f"│ {command} " in r.stdout, command


def test_help_paragraphs_are_not_broken_mid_sentence() -> None:
    # typer keeps a docstring's line breaks: a summary wrapped in the source came out broken
    # mid-sentence in `tfcc --help` ("... queues.parquet and" / "PNG plots in OUT ...")
    from tfcc.cli import app

    for c in app.registered_commands:
        for paragraph in (c.callback.__doc__ or "").split("\n\n"):
            assert "\n" not in paragraph.strip(), (c.callback.__name__, paragraph)


def test_help_texts_lose_no_bracketed_words_to_rich_markup() -> None:
    # typer renders help as rich markup, which swallows an unescaped "[word]": `tfcc sweep
    # --help` said "adds to or replaces the axes of the file's )." for "... file's [sweep.grid])."
    from rich.text import Text
    from typer.main import get_command

    from tfcc.cli import app

    for name, command in get_command(app).commands.items():
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        for text in texts:
            assert Text.from_markup(text).plain == text.replace("\\[", "["), (name, text)


def test_send_and_recv_help_comes_from_the_transport() -> None:
    for command in ("send", "recv"):
        r = run_cli(command, "--help")
        assert r.returncode == 0, r.stderr
        assert f"Usage: tfcc {command} [OPTIONS]" in r.stdout
        assert "tfrc, tfwc, warc, tear, tfrcp" in r.stdout, r.stdout


def test_an_unknown_command_exits_2_without_a_traceback() -> None:
    r = run_cli("no-such-command")
    assert r.returncode == 2
    assert "No such command" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_bad_option_value_exits_2_without_a_traceback() -> None:
    r = run_cli("demo", "--rtt-ms", "-5")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("demo", "--rtt-ms", "-5"),
            "error: Invalid value for '--rtt-ms': Input should be greater than or equal to "
            "0.001 (see python -m tfcc.cli demo --help)",
        ),
        (
            ("no-such-command",),
            "error: No such command 'no-such-command'. (see python -m tfcc.cli --help)",
        ),
        (
            ("query", "d", "q", "--bogus"),
            "error: No such option: --bogus (see python -m tfcc.cli query --help)",
        ),
        (("check",), "error: Missing argument 'scenario'. (see python -m tfcc.cli check --help)"),
        (("--bogus",), "error: No such option: --bogus (see python -m tfcc.cli --help)"),
    ],
)
def test_usage_errors_are_one_line(args: tuple[str, ...], line: str) -> None:
    # typer's own usage errors were five lines: the usage, a hint and the message in a box
    r = run_cli(*args)
    assert (r.returncode, r.stderr) == (2, line + "\n")


def test_no_arguments_still_show_the_help() -> None:
    r = run_cli()
    assert "Usage: " in r.stdout + r.stderr and "│ sweep " in r.stdout + r.stderr
    assert "error" not in r.stderr


def test_demo_refuses_an_infinite_rtt_and_a_packet_larger_than_a_datagram() -> None:
    # Before: --rtt-ms inf printed a table of nan and 0.0, --packet-size 1e20 one of 1e17 kbit/s,
    # and --packet-size 4294967295 (a scenario's limit then) a table of 4 GB packets.
    r = run_cli("demo", "--rtt-ms", "inf")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: --rtt-ms inf: must be a finite number of milliseconds"
    r = run_cli("demo", "--packet-size", "65536")
    assert r.returncode == 2
    assert "--packet-size" in r.stderr and "65535" in r.stderr
    assert "Traceback" not in r.stderr
    assert run_cli("demo", "--packet-size", "65535", "--rtt-ms", "1e300").returncode == 0


def test_demo_into_a_pipe_prints_whole_tables() -> None:
    # Into a pipe rich assumed 80 columns and cut the equation table's header after its fourth
    # column ("┏━━━━━━━━┳…━━━━━━━━━━━━━" and no corner); tfcc.console keeps tables whole there.
    r = run_cli("demo")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    tops = [ln.rstrip() for ln in lines if ln.startswith("┏")]
    assert len(tops) == 2 and all(t.endswith("┓") for t in tops), tops
    assert any("p from W (inverse)" in ln for ln in lines)


def test_send_and_recv_carry_a_tfrc_flow_over_loopback() -> None:
    # The `tfcc send` / `tfcc recv` route (tfcc.entry -> tfcc._core.cli_net -> tfcc-net): a 2 s
    # TFRC flow on loopback, reported by both ends.
    port = _free_udp_port()
    recv = _start_recv(port, "4s")
    try:
        send = _send(port, "2s")
        out, err = recv.communicate(timeout=30)
    finally:
        recv.kill()
    assert send.returncode == 0, send.stderr
    assert recv.returncode == 0, err
    assert "sent " in send.stdout and "pacing lateness" in send.stdout, send.stdout
    rows = [line.split() for line in out.splitlines()[1:] if line.split()[:1] != ["time_s"]]
    goodputs = [float(r[1]) for r in rows if len(r) >= 2 and r[0].replace(".", "").isdigit()]
    assert goodputs and max(goodputs) > 0.01, out


def test_send_and_recv_carry_a_rate_scheme_over_loopback() -> None:
    # TEAR (003's receiver-driven schemes share the sender; the receiver runs the estimator):
    # a 2 s flow on loopback, the receiver's rate reports reaching the sender, which paces
    # at them ("rate" mode, a rate in Mb/s).
    port = _free_udp_port()
    recv = _start_recv(port, "4s", "--protocol", "tear")
    try:
        send = _send(port, "2s", "--protocol", "tear")
        out, err = recv.communicate(timeout=30)
    finally:
        recv.kill()
    assert send.returncode == 0, send.stderr
    assert recv.returncode == 0, err
    # The first report may come after the first row (1 s: the sender starts at RFC 5348's one
    # packet per second; on loaded cores it came at 1.2 s), so only the last must be paced.
    rows = [line.split() for line in send.stdout.splitlines()[1:3]]
    assert rows and rows[-1][-1] == "rate" and float(rows[-1][2]) > 0, send.stdout
    feedback = int(send.stdout.split("feedback ")[1].split()[0])
    assert feedback > 10, send.stdout
    received = int(out.split("received ")[1].split()[0])
    assert received > 100 and "malformed 0," in out, out


def test_recv_refuses_another_rate_schemes_sender() -> None:
    # The scheme rides in every header: a TEAR receiver stops at a WARC sender's first packet
    # with one line naming both, exit 2, rather than report TEAR's rate to it.
    port = _free_udp_port()
    recv = _start_recv(port, "10s", "--protocol", "tear")
    try:
        assert recv.stdout is not None
        assert "time_s" in recv.stdout.readline()
        send = _send(port, "1s", "--protocol", "warc")
        out, err = recv.communicate(timeout=30)
    finally:
        recv.kill()
    assert recv.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: 127.0.0.1:"), err
    assert lines[0].endswith(" runs warc, this end tear: give both ends the same --protocol"), err
    assert send.returncode == 0 and "no feedback from" in send.stderr, send.stderr


def test_send_and_recv_name_the_problem_once_not_per_datagram() -> None:
    # A sender with nobody listening is told so; a receiver fed junk names the first datagram it
    # dropped once on stderr and counts the rest; a port in use names the flag and address.
    import socket

    port = _free_udp_port()  # bound and closed again: nobody listens there
    send = _send(port, "1s")
    assert send.returncode == 0, send.stderr
    assert f"no feedback from 127.0.0.1:{port}" in send.stderr, send.stderr

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        addr = f"127.0.0.1:{taken.getsockname()[1]}"
        busy = subprocess.run(
            [*ENTRY, "recv", "--listen", addr, "--duration", "1s"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert busy.returncode == 2
    assert busy.stderr.startswith(f"error: --listen {addr}: "), busy.stderr

    recv = _start_recv(port, "2s")
    try:
        # The table header is printed once the socket is bound.
        assert recv.stdout is not None
        assert "time_s" in recv.stdout.readline()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as junk:
            # The third is a whole 44-byte data header of wire version 1 (version 2 since the
            # header carries the latest RTT sample): refused, not misread.
            for payload in (b"", b"\x54\x46\x01\x01\x00", b"\x54\x46\x01\x01" + bytes(40)) * 20:
                junk.sendto(payload, ("127.0.0.1", port))
        out, err = recv.communicate(timeout=30)
    finally:
        recv.kill()
    assert recv.returncode == 0, err
    assert err.count("warning: dropped a datagram") == 1, err
    assert "malformed 60," in out, out
    assert "Traceback" not in err


def test_ctrl_c_ends_recv_with_its_summary_and_exit_130() -> None:
    # Ctrl-C used to kill `tfcc recv` outright (default SIGINT): the summary of what arrived
    # was lost. It now stops the flow, prints the summary over the time it ran, and exits 130.
    import signal
    import time

    port = _free_udp_port()
    recv = _start_recv(port, "60s")
    try:
        assert recv.stdout is not None
        assert "time_s" in recv.stdout.readline()
        start = time.monotonic()
        recv.send_signal(signal.SIGINT)
        out, err = recv.communicate(timeout=30)
        took = time.monotonic() - start
    finally:
        recv.kill()
    assert recv.returncode == 130, (recv.returncode, err)
    assert took < 5, took
    assert "received 0 datagrams" in out, out
    assert "interrupted at" in err and "Traceback" not in err, err


def test_run_prints_the_reverse_link_only_when_data_crosses_it(tmp_path) -> None:
    # The reverse bottleneck carries only ACKs unless a flow runs right to left; then its
    # utilisation, drops and queue are results too and `tfcc run` prints them.
    base = """
name = "rev"
duration = "4s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "10ms", queue = "droptail", limit = 20 }
[[flows]]
protocol = "tcp-sack"
"""
    rev = base + '[[flows]]\nprotocol = "tcp-sack"\ndirection = "reverse"\n'
    for text, shown in ((base, False), (rev, True)):
        f = tmp_path / "s.toml"
        f.write_text(text)
        r = run_cli("run", str(f), "--out", str(tmp_path / f"out{shown}"))
        assert r.returncode == 0, r.stderr
        assert "link bottleneck:" in r.stdout
        assert ("link bottleneck-rev:" in r.stdout) is shown, r.stdout


def test_check_says_what_a_trace_will_record(tmp_path) -> None:
    # `tfcc check` is where a file is checked before running; it said nothing of [trace].
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "30s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "2Mbps", delay = "10ms" }\n'
        '[[flows]]\nprotocol = "tcp-sack"\n[trace]\nuntil = "20s"\n'
    )
    r = run_cli("check", str(f))
    assert r.returncode == 0, r.stderr
    assert "; [trace]: bottleneck, bottleneck-rev from 0 s to 20 s" in r.stdout, r.stdout
    r = run_cli("check", str(f), "--set", 'trace.links=["access-src-0"]', "--set", "trace.from=5s")
    assert "; [trace]: access-src-0 from 5 s to 20 s" in r.stdout, r.stdout
    assert tfcc.check_scenario(f, ["trace.from=5s"])["trace"]["from_s"] == 5.0
    f.write_text(f.read_text().replace('[trace]\nuntil = "20s"\n', ""))
    r = run_cli("check", str(f))
    assert r.returncode == 0 and "[trace]" not in r.stdout
    assert tfcc.check_scenario(f)["trace"] is None


def test_check_backend_testbed_refuses_what_the_testbed_would_without_root() -> None:
    # The simulator accepts a stall and a 20-byte TFRC packet; the testbed refused them only
    # once `tfcc run --backend testbed` started. Its checks need no root: run as nobody when
    # root, so the test shows they come before anything that would.
    base = (
        'duration = "5s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "4Mbps", delay = "10ms", limit = 30 }\n'
    )
    stall = base + (
        '[[flows]]\nprotocol = "tcp-sack"\n'
        '[[events]]\nat = "1s"\nlink = "bottleneck"\nstall = true\n'
    )
    tiny = base + '[[flows]]\nprotocol = "tfrc"\npacket_size = 20\n'
    params = base + '[[flows]]\nprotocol = "tcp-sack"\nparams = { max_window = 2 }\n'
    # pytest's tmp_path lies under a directory only root may enter
    tmp_path = Path(tempfile.mkdtemp(prefix="tfcc-check-"))
    files = {}
    for name, text in (("stall", stall), ("tiny", tiny), ("params", params)):
        f = tmp_path / f"{name}.toml"
        f.write_text(text)
        f.chmod(0o644)
        files[name] = f
    tmp_path.chmod(0o755)
    prefix: list[str] = []
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("setpriv"):
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "tfcc.cli", "check", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    for name, word in (
        ("stall", "a stall (a link that holds arrivals while it does not transmit)"),
        ("tiny", "flow 0: a TFRC packet of 20 B on the wire cannot carry UDP/IPv4's 28 B"),
    ):
        r = check(str(files[name]))
        assert r.returncode == 0, r.stderr  # the simulator runs it
        r = check(str(files[name]), "--backend", "testbed")
        assert r.returncode == 2, r.stdout
        assert r.stderr.startswith(f"error: {files[name]}: --backend testbed: "), r.stderr
        assert word in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr
        with pytest.raises(tfcc.ScenarioError, match="--backend testbed"):
            tfcc.check_scenario(files[name], backend="testbed")
    # Accepted, with what the kernel's TCP does otherwise than the file says.
    r = check(str(files["params"]), "--backend", "testbed")
    assert r.returncode == 0, r.stderr
    assert ": ok on the testbed: " in r.stdout, r.stdout
    assert r.stderr.startswith("note: flow 0 (tcp-sack): its params"), r.stderr
    assert tfcc.check_scenario(files["params"], backend="testbed")["notes"]
    assert tfcc.check_scenario(files["params"])["notes"] == []
    r = check(str(files["params"]), "--backend", "ns3")
    assert (r.returncode, r.stderr) == (
        2,
        "error: --backend ns3: unknown backend (use sim or testbed)\n",
    )
    with pytest.raises(ValueError, match="unknown backend"):
        tfcc.check_scenario(files["params"], backend="ns3")
    shutil.rmtree(tmp_path)


@pytest.mark.parametrize(
    ("signum", "code", "word"), [(None, 130, "interrupted"), (15, 143, "terminated")]
)
def test_an_interrupt_typer_swallows_still_gets_its_word_and_status(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    signum: int | None,
    code: int,
    word: str,
) -> None:
    # A command without a KeyboardInterrupt handler of its own (demo, query, report): typer
    # exited 130 without a word, and with 130 for SIGTERM too.
    import signal

    import tfcc.demo
    import tfcc.entry

    def interrupted(**_: object) -> None:
        tfcc.entry._stopped_by = signum  # as the SIGTERM handler does
        raise KeyboardInterrupt

    monkeypatch.setattr(tfcc.demo, "run_demo", interrupted)
    monkeypatch.setattr(sys, "argv", ["tfcc", "demo"])
    monkeypatch.setattr(tfcc.entry, "_stopped_by", None)
    monkeypatch.setattr(tfcc.entry, "_said", False)
    term = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as e:
            tfcc.entry.main()
    finally:
        signal.signal(signal.SIGTERM, term)
    assert e.value.code == code
    assert capsys.readouterr().err == f"{word}\n"
