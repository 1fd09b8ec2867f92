"""``tfcc demo``: the throughput-equation table and a worked loss-history example.

Everything printed is computed by the Rust core (``tfcc._core``); nothing here is a model of its
own. The loss-history walk is the worked check of thesis 004 Sec. 3.4.3 (spec 004 §2.7): eight
closed intervals of 100 packets, then an open interval that grows past them.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

import tfcc
from tfcc.console import table_console

#: Loss event rates for the table: the range the theses plot (004 Fig. 2.2, 002 Table 3.1).
P_GRID = (0.0001, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)

#: Open-interval lengths for the loss-history walk (packets since the last loss event).
OPEN_STEPS = (1, 50, 100, 150, 200, 300, 400)


def equation_table(packet_size: int, rtt_s: float) -> Table:
    """One row per p: packets per RTT and rate of the simple and the Padhye model."""
    t = Table(
        title=f"TCP throughput equations, s = {packet_size} B, R = {rtt_s * 1000:g} ms "
        "(Padhye: RFC 5348 form, b = 1, t_RTO = 4R)",
        title_justify="left",
    )
    for col in (
        "p",
        "simple pkts/RTT",
        "Padhye pkts/RTT = W(p)",
        "simple kbit/s",
        "Padhye kbit/s",
        "p from W (inverse)",
    ):
        t.add_column(col, justify="right")
    for p in P_GRID:
        simple = tfcc.simple_rate(packet_size, rtt_s, p)
        padhye = tfcc.padhye_rate(packet_size, rtt_s, p)
        w = tfcc.window(p)
        t.add_row(
            f"{p:g}",
            f"{simple * rtt_s / packet_size:.2f}",
            f"{w:.2f}",
            f"{simple * 8 / 1000:,.1f}",
            f"{padhye * 8 / 1000:,.1f}",
            f"{tfcc.p_from_window(w):.6g}",
        )
    return t


def loss_history_table() -> Table:
    """The current-interval rule (INC/DEC) and history discounting, step by step."""
    plain = tfcc.LossHistory(8, discounting="off")
    disc = tfcc.LossHistory(8)  # the thesis' choice: proportional deweighting + remodelling
    for h in (plain, disc):
        h.loss_event()  # the first event starts the history; its empty pre-run is not an interval
        for _ in range(8):
            h.packets(99)
            h.loss_event()
    t = Table(
        title="Loss history, n = 8, weights 1,1,1,1,.8,.6,.4,.2 (004 Sec. 3.4.3 and 3.7): "
        "8 closed intervals of 100 packets, then no loss",
        title_justify="left",
    )
    for col in ("open interval", "ALI (no discounting)", "mode", "p", "ALI (discounted)", "d"):
        t.add_column(col, justify="right")
    done = 1  # the loss event itself opened the interval with one packet
    for step in OPEN_STEPS:
        for h in (plain, disc):
            h.packets(step - done)
        done = step
        mode = "DEC" if plain.ali > 100.0 else "INC"
        t.add_row(
            str(step),
            f"{plain.ali:.2f}",
            mode,
            f"{plain.p:.5f}",
            f"{disc.ali:.2f}",
            f"{disc.discount_factor:.2f}",
        )
    for h in (plain, disc):
        h.loss_event()
    t.add_row(
        "loss",
        f"{plain.ali:.2f}",
        "INC",
        f"{plain.p:.5f}",
        f"{disc.ali:.2f}",
        f"{disc.discount_factor:.2f}",
    )
    return t


def run_demo(packet_size: int = 1000, rtt_s: float = 0.1, console: Console | None = None) -> None:
    console = console or table_console()
    console.print(equation_table(packet_size, rtt_s))
    console.print()
    console.print(loss_history_table())
    console.print(
        "DEC mode: the open interval enters the average (with preshifted weights) only when it "
        "raises it; at 150 packets ALI = (150 + 5·100)/6 = 108.33. Discounting: once the open "
        "interval exceeds 2× the average, old intervals are deweighted by d, and the loss that "
        "ends the stretch keeps the estimate (history remodelling)."
    )
