"""Which TFRC the thesis-003 runs use (issue 7).

003 Sec. 2.4 ran ns-2 with TFRC's code as its authors published it (ns-2's ``Agent/TFRC``) and
"packets that were 1,000 bytes long": every TFRC flow of the 003 scenarios and of the claims
that make a flow TFRC is the ``ns2`` preset with a 1000-byte payload and no header on top, so
its packets are 1000 B on the wire, as WARC's, TEAR's, TFRCP's and the CBR's are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tfcc import _core

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted(p for p in (ROOT / "scenarios").glob("003-e*.toml"))
NS2_1000 = {"preset": "ns2", "header_size": 0}


def _tfrc_params_in_sets(sets: list[str]) -> list[dict[str, object]]:
    """The ``params`` each ``flows.N.protocol=tfrc`` override in ``sets`` comes with."""
    found = []
    for entry in sets:
        key, _, value = entry.partition("=")
        if not (key.startswith("flows.") and key.endswith(".protocol") and value == "tfrc"):
            continue
        flow = key.removesuffix(".protocol")
        params = [s.partition("=")[2] for s in sets if s.partition("=")[0] == f"{flow}.params"]
        assert len(params) == 1, f"{entry}: its params are not set exactly once"
        found.append(_core.parse_toml(f"p = {params[0]}")["p"])
    return found


def test_every_003_scenario_tfrc_flow_is_ns2s_agent_with_1000_byte_packets() -> None:
    flows = []
    for path in SCENARIOS:
        doc = _core.parse_toml(path.read_text())
        for f in doc.get("flows", []):
            if f.get("protocol") == "tfrc":
                flows.append(path.name)
                assert f.get("params") == NS2_1000, path.name
                assert f.get("packet_size") == "1000B", path.name
        assert "Sec. 2.4" in path.read_text(), f"{path.name} does not cite 003 Sec. 2.4"
    assert flows == ["003-e21-nonperiodic.toml", "003-e23-twostate.toml"]


@pytest.mark.parametrize("name", ["taxonomy", "warc"])
def test_every_003_claim_that_makes_a_flow_tfrc_uses_ns2s_agent(name: str) -> None:
    from tfcc import reproduce

    _, claims = reproduce.load(name)
    seen = 0
    for c in claims:
        sets = [list(c.set)]
        if c.versus is not None and "set" in c.versus:
            sets.append(list(c.versus["set"]))
        for s in sets:
            for params in _tfrc_params_in_sets(s):
                seen += 1
                assert params == NS2_1000, c.id
    assert seen >= 4


def test_ns2s_tfrc_puts_1000_bytes_on_the_wire_in_the_003_bursty_set_up() -> None:
    # E2.4 with TFRC as the claims set it: TFRC and both CBR sources share the bottleneck, so
    # every packet it carried is 1000 B only if TFRC's are (the preset alone would add 32 B).
    from tfcc import _core

    scenario = ROOT / "scenarios" / "003-e24-bursty.toml"
    base = ["flows.0.protocol=tfrc", "duration=20s", "measure_from=0s"]

    def bottleneck(params: str) -> dict[str, object]:
        r = _core.run_scenario(str(scenario), [*base, f"flows.0.params={params}"], 1, None)
        (link,) = [x for x in r["summary"]["links"] if x["name"] == "bottleneck"]
        return link

    ours = bottleneck('{ preset = "ns2", header_size = 0 }')
    assert ours["tx_packets"] > 10_000
    assert ours["tx_bytes"] == 1000 * ours["tx_packets"]
    preset_alone = bottleneck('{ preset = "ns2" }')
    assert preset_alone["tx_bytes"] > 1000 * preset_alone["tx_packets"]
