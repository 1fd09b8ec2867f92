"""examples/udp_tfrc.py, the embedding loop over real UDP sockets on the loopback: a receiver
standing in for a 50 ms path that loses every 50th packet, and a media sender that adapts its
codec to the allowed rate. Five seconds of real time."""

from __future__ import annotations

import importlib.util
import io
import threading
from pathlib import Path

import pytest

import tfcc

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location("udp_tfrc", ROOT / "examples" / "udp_tfrc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_media_sender_settles_at_the_equation_rate_over_real_sockets() -> None:
    ex = _example()
    port = _free_port()
    rx_args = ex.parser().parse_args(
        ["recv", "--port", str(port), "--delay", "50ms", "--loss-every", "50"]
    )
    tx_args = ex.parser().parse_args(
        ["send", "--to", f"127.0.0.1:{port}", "--seconds", "5", "--bitrate", "4Mbps", "--adapt"]
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
    # The receiver's loss event rate is the emulated link's (one loss per 50 packets, each its
    # own event at about one loss every 0.4 s), the sender's RTT the held-back reports' 50 ms
    # plus the loop's own latency, and the allowed rate Eq. 2.7's for both.
    assert abs(got["p"] - 0.02) < 0.003, got["p"]
    rtt = sent["stats"]["rtt"]
    assert 0.05 <= rtt < 0.08, rtt
    expected = tfcc.padhye_rate(s=1200, rtt=rtt, p=sent["stats"]["p"])
    assert abs(sent["rate"] - expected) <= 0.1 * expected, (sent["rate"], expected)
    # The media bytes: each offered byte was carried once after a header or still waits,
    # every byte sent arrived, and the decoder got each kept datagram's bytes after its 44-byte
    # header, which is what the receiver counts as delivered.
    assert sent["offered"] == sent["carried"] + sent["buffered"], sent
    assert sent["sent"] == sent["carried"] + 44 * sent["datagrams"]
    assert got["arrived_bytes"] == sent["sent"]
    kept = got["arrived"] - got["discarded"]
    assert got["payload"] == got["delivered"] == got["kept_bytes"] - 44 * kept, got
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
