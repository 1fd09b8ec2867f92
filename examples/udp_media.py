"""A media sender and its receiver over real UDP sockets, with TFRC (004) or TFWC (002) as
the congestion control: README's "Embedding a controller in a media application", as a program
to run and to copy from.

    python examples/udp_media.py recv --port 5000 --delay 50ms --loss-every 50
    python examples/udp_media.py send --to 127.0.0.1:5000 --seconds 10 --bitrate 4Mbps --adapt

(``--protocol tfwc`` on both ends for TFWC.) The sender is a media source: every 1/fps s a
frame of ``bitrate / fps`` bytes is offered to the controller (``offer``), which sends it in
packets as fast as TFRC's rate or TFWC's window allows. A codec that ignores the allowed rate
fills the send buffer (the frames wait, latency grows); with ``--adapt`` the codec's bitrate
follows the allowed rate once a second (TFWC's: its window per RTT), as a media application's
encoder should. Each second the sender prints the allowed rate (and TFWC's window), the codec's
rate, the RTT, the loss event rate and the bytes waiting.

On one machine the receiver stands in for the path: ``--delay`` holds its reports back (the
round-trip time the sender measures) and ``--loss-every N`` discards every N-th data packet
before the controller sees it (a lossy link). With 50 ms and every 50th packet TFRC settles at
the rate of 004's Eq. 2.7 for p = 0.02, TFWC at the window 1/f(p) of 002's Eq. 3.4.

The loop is the whole of the embedding: poll what is due, feed each datagram in with the time it
came, sleep on the socket until the earliest deadline. tfcc never reads a clock or a socket;
the time is any monotonic clock in integer nanoseconds.
"""

from __future__ import annotations

import argparse
import heapq
import selectors
import socket
import sys
import time

import tfcc
from tfcc._core import parse_quantity

PAYLOAD = bytes(1500)


def quantity(kind: str):
    """An argparse type for a scenario-file quantity ("4Mbps", "50ms") in base units."""

    def parse(text: str) -> float:
        q = parse_quantity(text)
        if q is None or q[0] != kind:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind} (e.g. 4Mbps, 50ms)")
        return q[1]

    return parse


def positive(text: str) -> float:
    """An argparse type for a number above zero."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value


def count(text: str) -> int:
    """An argparse type for a whole number from 0."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0")
    return int(text)


def port(text: str) -> int:
    """An argparse type for a UDP port."""
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1 to 65535)")
    return int(text)


def address(text: str) -> tuple[str, int]:
    """An argparse type for HOST:PORT."""
    host, _, number = text.rpartition(":")
    if not host or not number.isdigit() or not 0 < int(number) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:5000)")
    return host, int(number)


def wait(sel: selectors.DefaultSelector, deadline_ns: int) -> None:
    """Sleeps until the socket is readable or the deadline passes."""
    sel.select(max(deadline_ns - time.monotonic_ns(), 0) / 1e9)


#: Each protocol's classes and default preset: RFC 5348's rules for TFRC (a media source is
#: application-limited, and RFC 5348 Sec. 4.3/8.2 say what a data-limited sender may do; 004's
#: sender is always bulk), Choi's ns-2 agent for TFWC (as ``tfcc send``).
PROTOCOLS = {
    "tfrc": (tfcc.TfrcSender, tfcc.TfrcReceiver, "rfc5348"),
    "tfwc": (tfcc.TfwcSender, tfcc.TfwcReceiver, "ns2"),
}


def endpoint(args: argparse.Namespace, end: int):
    cls = PROTOCOLS[args.protocol][end]
    return cls(packet_size=args.packet_size, preset=args.preset or PROTOCOLS[args.protocol][2])


def allowed_bps(tx, packet_size: int) -> float | None:
    """What the controller allows now: TFRC's rate, TFWC's window per RTT (None before an RTT)."""
    if hasattr(tx, "rate_bps"):
        return tx.rate_bps
    rtt = tx.stats()["rtt"]
    return tx.window * packet_size * 8 / rtt if rtt else None


def send(args: argparse.Namespace, out=sys.stdout) -> dict:
    """Runs the media sender for ``args.seconds``; returns its last stats and counters."""
    tx = endpoint(args, 0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(args.to)
        return _send(args, tx, sock, out)


def _send(args: argparse.Namespace, tx, sock: socket.socket, out) -> dict:
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    tx.offer(0)  # application-limited: it sends only what the codec offers
    start = time.monotonic_ns()
    end = start + int(args.seconds * 1e9)
    frame_gap = int(1e9 / args.fps)
    codec_bps = args.bitrate
    next_frame = next_print = start
    offered = sent = carried = datagrams = 0
    while (now := time.monotonic_ns()) < end:
        while next_frame <= now:
            frame = int(codec_bps / 8 / args.fps)
            tx.offer(frame)
            offered += frame
            next_frame += frame_gap
        while (header := tx.poll_transmit(now)) is not None:
            size = tx.last_datagram_size
            try:
                sock.send(header + PAYLOAD[: max(size - len(header), 0)])
                sent += size
                carried += size - len(header)  # the frame bytes after the header
                datagrams += 1
            except BlockingIOError:  # the socket's buffer is full
                if hasattr(tx, "on_send_error"):
                    tx.on_send_error(now)  # TFRC takes it as a loss (004 Sec. 3.8)
            except ConnectionRefusedError:
                pass  # no receiver yet; the no-feedback timer slows the sender down
        tx.on_timeout(now)
        if now >= next_print:
            st = tx.stats()
            rtt = "  none  " if st["rtt"] is None else f"{st['rtt'] * 1e3:5.1f} ms"
            allowed = allowed_bps(tx, args.packet_size)
            if args.adapt:  # the encoder's knob: 90 % of the allowed rate, within its range
                codec_bps = min(max(0.9 * (allowed or 0.0), 64e3), args.bitrate)
            window = f"window {tx.window:3d}  " if hasattr(tx, "window") else ""
            rate = "   none   " if allowed is None else f"{allowed / 1e6:7.3f} Mb/s"
            print(
                f"{(now - start) / 1e9:5.1f} s  allowed {rate}  {window}"
                f"codec {codec_bps / 1e6:6.3f} Mb/s  rtt {rtt}  "
                f"p {st['p'] or 0:.4f}  waiting {tx.buffered} B",
                file=out,
                flush=True,
            )
            next_print += 1_000_000_000
        deadlines = [next_frame, next_print, end]
        if (t := tx.next_timeout()) is not None:
            deadlines.append(t)
        wait(sel, min(deadlines))
        while True:
            try:
                report = sock.recv(2048)
            except (BlockingIOError, ConnectionRefusedError):
                break
            tx.on_datagram(time.monotonic_ns(), report)
    return {
        "stats": tx.stats(),
        "allowed_bps": allowed_bps(tx, args.packet_size),
        "window_exact": getattr(tx, "window_exact", None),
        "offered": offered,
        "sent": sent,
        "carried": carried,
        "datagrams": datagrams,
        "buffered": tx.buffered,
    }


def recv(args: argparse.Namespace, out=sys.stdout, ready=None, stop=None) -> dict:
    """Runs the receiver until ``args.seconds`` pass (0: until interrupted) or ``stop`` is set;
    returns its stats and counters. ``ready`` (a threading.Event) is set once it listens."""
    rx = endpoint(args, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((args.bind, args.port))
        if ready is not None:
            ready.set()
        return _recv(args, rx, sock, out, stop)


def _recv(args: argparse.Namespace, rx, sock: socket.socket, out, stop) -> dict:
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    delay = int(args.delay * 1e9)
    held: list[tuple[int, int, bytes]] = []  # (release time, order, report): the path's delay
    peer = None
    arrived = arrived_bytes = kept_bytes = discarded = payload = order = 0
    end = time.monotonic_ns() + int(args.seconds * 1e9) if args.seconds else None
    while (end is None or time.monotonic_ns() < end) and not (stop and stop.is_set()):
        deadlines = [t for t in (rx.next_timeout(), end) if t is not None]
        if held:
            deadlines.append(held[0][0])
        wait(sel, min(deadlines) if deadlines else time.monotonic_ns() + 100_000_000)
        while True:
            try:
                data, peer = sock.recvfrom(2048)
            except BlockingIOError:
                break
            arrived += 1
            arrived_bytes += len(data)
            if args.loss_every and arrived % args.loss_every == 0:
                discarded += 1  # lost on the emulated link: the controller never sees it
                continue
            kept_bytes += len(data)
            offset = rx.on_datagram(time.monotonic_ns(), data)
            if offset is not None:
                payload += len(data) - offset  # the media bytes, to the decoder
        now = time.monotonic_ns()
        rx.on_timeout(now)
        while (report := rx.poll_transmit(now)) is not None:
            heapq.heappush(held, (now + delay, order, report))
            order += 1
        while held and held[0][0] <= now and peer is not None:
            sock.sendto(heapq.heappop(held)[2], peer)
    st = rx.stats()
    p = f", p {rx.p:.4f}" if hasattr(rx, "p") else ""  # TFWC's sender measures p
    print(f"received {arrived} datagrams, discarded {discarded}{p}", file=out)
    return {
        "stats": st,
        "p": getattr(rx, "p", None),
        "arrived": arrived,
        "arrived_bytes": arrived_bytes,
        "discarded": discarded,
        "kept_bytes": kept_bytes,
        "payload": payload,
        "delivered": rx.delivered_bytes,
    }


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="role", required=True)
    for role in ("send", "recv"):
        p = sub.add_parser(role)
        p.add_argument("--packet-size", type=int, default=1200, help="bytes (default 1200)")
        p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="tfrc")
        p.add_argument(
            "--preset",
            help="tfrc: thesis, ns2 or rfc5348 (default); tfwc: ns2 (default), thesis or vic",
        )
    s = sub.choices["send"]
    s.add_argument("--to", type=address, required=True, help="the receiver's HOST:PORT")
    s.add_argument("--seconds", type=float, default=10.0)
    s.add_argument("--bitrate", type=quantity("rate"), default=4e6, help="codec rate, e.g. 4Mbps")
    s.add_argument("--fps", type=positive, default=25.0, help="frames per second (default 25)")
    s.add_argument("--adapt", action="store_true", help="the codec follows the allowed rate")
    r = sub.choices["recv"]
    r.add_argument("--bind", default="127.0.0.1")
    r.add_argument("--port", type=port, default=5000)
    r.add_argument("--seconds", type=float, default=0.0, help="stop after (default: never)")
    r.add_argument(
        "--delay", type=quantity("duration"), default=0.0, help="reports held, e.g. 50ms"
    )
    r.add_argument(
        "--loss-every", type=count, default=0, help="discard every N-th packet (0: none)"
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.role == "send":
            send(args)
        else:
            recv(args)
    except ValueError as e:  # a bad preset or packet size, named by the endpoint
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
