"""The small scenario the sweep and report tests share: one TCP-SACK flow against one TFWC flow
on a 2 Mb/s dumbbell, 3 s of which the last 2 are measured. A run takes a few tens of
milliseconds, so a test can sweep a grid of them. Each test appends its own [sweep] table."""

PAIR = """\
duration = "3s"
measure_from = "1s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "10ms", queue = "droptail", limit = 20 }
access = { rate = "100Mbps", delay = { random = ["0.1ms", "2ms"] } }
[[flows]]
protocol = "tcp-sack"
count = 1
[[flows]]
protocol = "tfwc"
count = 1
"""
