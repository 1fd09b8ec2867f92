"""examples/udp_media.py, the embedding loop over real UDP sockets on the loopback: a receiver
standing in for a 50 ms path that loses every 50th packet, and a media sender that adapts its
codec to the allowed rate, with TFRC (5 s of real time) and with TFWC (8 s)."""

from __future__ import annotations

import importlib.util
import io
import threading
from pathlib import Path

import pytest

import tfcc

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location("udp_media", ROOT / "examples" / "udp_media.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# TFWC's first loss interval, seeded from its slow start, leaves its 8-interval history after
# about 6 s here (p 0.0178 at 4 s, 0.0200 from 6 s in one run), TFRC's after about 4 s.
@pytest.mark.parametrize(("protocol", "header", "seconds"), [("tfrc", 44, 5), ("tfwc", 28, 8)])
def test_a_media_sender_settles_at_the_equation_over_real_sockets(
    protocol, header, seconds
) -> None:
    ex = _example()
    port = _free_port()
    rx_args = ex.parser().parse_args(
        ["recv", "--port", str(port), "--delay", "50ms", "--loss-every", "50"]
        + ["--protocol", protocol]
    )
    tx_args = ex.parser().parse_args(
        ["send", "--to", f"127.0.0.1:{port}", "--seconds", str(seconds), "--bitrate", "4Mbps"]
        + ["--adapt", "--protocol", protocol]
    )
    ready, stop, got = threading.Event(), threading.Event(), {}
    t = threading.Thread(
        target=lambda: got.update(ex.recv(rx_args, io.StringIO(), ready, stop)), daemon=True
    )
    t.start()
    assert ready.wait(5)
    out = io.StringIO()
    sent = ex.send(tx_args, out)
    stop.set()
    t.join(5)
    assert not t.is_alive()
    # Nothing is lost on the loopback itself: every datagram sent arrived, every 50th discarded.
    assert got["arrived"] == sent["datagrams"] > 200, (got, sent)
    assert got["discarded"] == got["arrived"] // 50
    # The loss event rate is the emulated link's (one loss per 50 packets, each its own event
    # at about one loss every 0.4 s), the sender's RTT the held-back reports' 50 ms plus the
    # loop's own latency, and what the controller allows the equation's for both: TFRC's rate
    # (004 Eq. 2.7), TFWC's window 1/f(p) (002 Eq. 3.4).
    st = sent["stats"]
    assert abs(st["p"] - 0.02) < 0.003, st
    if got["p"] is not None:  # TFRC's receiver measures p and reports it
        assert got["p"] == st["p"], (got["p"], st)
    assert 0.05 <= st["rtt"] < 0.08, st
    if protocol == "tfrc":
        expected = tfcc.padhye_rate(s=1200, rtt=st["rtt"], p=st["p"]) * 8
        assert abs(sent["allowed_bps"] - expected) <= 0.1 * expected, (sent, expected)
    else:
        assert abs(sent["window_exact"] - tfcc.window(st["p"])) < 1e-9, sent
    # The media bytes: each offered byte was carried once after a header or still waits,
    # every byte sent arrived, and the decoder got each kept datagram's bytes after its header,
    # which is what the receiver counts as delivered.
    assert sent["offered"] == sent["carried"] + sent["buffered"], sent
    assert sent["sent"] == sent["carried"] + header * sent["datagrams"]
    assert got["arrived_bytes"] == sent["sent"]
    kept = got["arrived"] - got["discarded"]
    assert got["payload"] == got["delivered"] == got["kept_bytes"] - header * kept, got
    assert "allowed" in out.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["send", "--to", "127.0.0.1:9", "--bitrate", "fast"], "is not a rate"),
        (["recv", "--delay", "4Mbps"], "is not a duration"),
        (["send", "--to", "localhost"], "is not HOST:PORT"),
        (["send", "--to", "localhost:99999"], "is not HOST:PORT"),
        (["recv", "--port", "70000"], "is not a port"),
        (["send", "--to", "127.0.0.1:9", "--fps", "0"], "is not a number above 0"),
        (["recv", "--loss-every", "-3"], "is not a whole number"),
    ],
)
def test_bad_flags_are_one_message(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        _example().main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_bad_preset_is_one_message(capsys) -> None:
    rc = _example().main(["send", "--to", "127.0.0.1:9", "--seconds", "0.1", "--preset", "x"])
    assert rc == 2
    assert capsys.readouterr().err.startswith("error: ")
