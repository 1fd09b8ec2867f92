"""`tfcc.decode_datagram`: any tfcc UDP payload's header read by the transport's Rust decoder
(crates/tfcc-net/src/wire.rs `identify` and `decode`), for scripts and tests that read captures
instead of repeating the layouts with `struct` offsets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfcc

MS = 1_000_000


def test_each_endpoints_packets_decode_as_their_protocol_with_the_rust_field_names() -> None:
    tx, rx = tfcc.TfrcSender(packet_size=1000), tfcc.TfrcReceiver(packet_size=1000)
    data = tx.poll_transmit(10 * MS)
    assert data is not None
    d = tfcc.decode_datagram(data + bytes(956))  # the payload after the header is not read
    assert d == {
        "protocol": "tfrc",
        "kind": "tfrc-data",
        "header_len": 44,
        "seq": 0,
        "timestamp": 10 * MS,
        "rtt": 0,
        "rtt_sample": 0,
        "rate": d["rate"],
        "mode": "init-rtt",
        "round": 0,
    }
    assert d["rate"] > 0
    assert rx.on_datagram(20 * MS, data + bytes(956)) == 44
    report = rx.poll_transmit(25 * MS)
    assert report is not None
    f = tfcc.decode_datagram(report)
    assert (f["protocol"], f["kind"], f["header_len"]) == ("tfrc", "tfrc-feedback", 40)
    assert (f["seq_echo"], f["timestamp_echo"], f["t_delay"]) == (0, 10 * MS, 5 * MS)
    assert (f["x_recv"], f["p"]) == (0, 0.0)

    tx, rx = tfcc.TfwcSender(), tfcc.TfwcReceiver()
    data = tx.poll_transmit(3 * MS)
    assert data is not None
    d = tfcc.decode_datagram(data)
    assert d == {
        "protocol": "tfwc",
        "kind": "tfwc-data",
        "header_len": 28,
        "seq": 0,
        "sent_at": 3 * MS,
        "aoa": None,
    }
    rx.on_packet(4 * MS, data)
    ack = rx.poll_transmit(4 * MS)
    assert ack is not None
    # One run of one received packet: 20 bytes and a run byte; bit 0 is the head, received.
    assert tfcc.decode_datagram(ack) == {
        "protocol": "tfwc",
        "kind": "tfwc-ack",
        "header_len": 21,
        "head": 0,
        "bits": 1,
        "echo": 3 * MS,
    }

    for scheme in ("warc", "tear", "tfrcp"):
        tx = tfcc.RateSender(scheme=scheme, packet_size=1000)
        rx = tfcc.RateReceiver(scheme=scheme, packet_size=1000)
        data = tx.poll_transmit(7)
        assert data is not None
        d = tfcc.decode_datagram(data)
        assert (d["protocol"], d["kind"], d["header_len"]) == (scheme, "rate-data", 36)
        assert (d["seq"], d["sent_at"], d["rtt"]) == (0, 7, 0)
        assert d["rto"] == 3000 * MS  # RFC 6298's initial RTO before any sample
        rx.on_datagram(9, data + bytes(964))
        report = rx.poll_transmit(9)
        assert report is not None
        f = tfcc.decode_datagram(report)
        assert (f["protocol"], f["kind"], f["header_len"]) == (scheme, "rate-feedback", 28)
        assert f["echo"] == 7 and f["rate"] > 0, f


def test_the_raw_header_cbr_sends() -> None:
    # No Python endpoint sends it: "TF", version 1, type 0x10, then seq and sent_at (ns).
    raw = bytes.fromhex("54460110") + (5).to_bytes(8, "big") + (6 * MS).to_bytes(8, "big")
    assert tfcc.decode_datagram(raw + bytes(980)) == {
        "protocol": "raw",
        "kind": "raw",
        "header_len": 20,
        "seq": 5,
        "sent_at": 6 * MS,
    }


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"", "not a tfcc datagram: 0 bytes, too short for a type word"),
        (b"TF\x02", "not a tfcc datagram: 3 bytes, too short for a type word"),
        (bytes(40), "not a tfcc datagram: unknown type word 0x00000000"),
        # TFRC's version-1 and version-2 data words, and a fourth rate scheme
        (
            bytes.fromhex("54460101") + bytes(40),
            "not a tfcc datagram: unknown type word 0x54460101",
        ),
        (
            bytes.fromhex("54460201") + bytes(40),
            "not a tfcc datagram: unknown type word 0x54460201",
        ),
        (
            bytes.fromhex("57520301") + bytes(40),
            "not a tfcc datagram: unknown type word 0x57520301",
        ),
        (bytes.fromhex("54460301"), "malformed tfrc data datagram: tfrc header truncated"),
        (b"\x02\x00\x00", "malformed tfwc feedback datagram: TFWC packet too short: 3 bytes"),
        (bytes.fromhex("57520102") + bytes(10), "malformed tear feedback datagram: truncated"),
        # A NaN rate in a WARC report, a loss event rate of 2 in a TFRC one
        (
            bytes.fromhex("57520002") + bytes(16) + bytes.fromhex("7ff8000000000000"),
            "malformed warc feedback datagram: rate is not a finite non-negative number",
        ),
        (
            bytes.fromhex("54460302") + bytes(28) + bytes.fromhex("4000000000000000"),
            "malformed tfrc feedback datagram: tfrc feedback header: loss event rate",
        ),
    ],
)
def test_anything_else_is_one_value_error_saying_what(payload: bytes, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)) as e:
        tfcc.decode_datagram(payload)
    assert "\n" not in str(e.value)


@given(st.binary(max_size=120), st.sampled_from([b"", b"TF\x01\x10", b"TF\x02\x02", b"WR\x00\x01"]))
def test_random_bytes_decode_or_raise_value_error(rest: bytes, word: bytes) -> None:
    payload = word + rest
    try:
        d = tfcc.decode_datagram(payload)
    except ValueError as e:
        assert str(e).startswith(("not a tfcc datagram: ", "malformed ")), e
        return
    assert 0 < d["header_len"] <= len(payload)
    assert d["protocol"] in ("raw", "tfrc", "tfwc", "warc", "tear", "tfrcp")
