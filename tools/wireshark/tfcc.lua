-- Wireshark dissector for tfcc's UDP wire formats: the headers its protocols put at the front of
-- each datagram on a real network (crates/tfcc-net, the testbed) and in the pcap files of a
-- simulated run (`[trace] pcap = true`, crates/tfcc-run/src/pcap.rs). Written from tfcc's own
-- definitions, which are the reference when the two disagree:
--
--   raw (CBR)       crates/tfcc-net/src/wire.rs       type word 0x54460110
--   TFRC data/fb    crates/tfcc-core/src/tfrc/wire.rs type words 0x54460301 / 0x54460302
--   TFWC data/ack   crates/tfcc-core/src/tfwc/wire.rs type byte 1 / 2
--   WARC/TEAR/TFRCP crates/tfcc-core/src/warc/wire.rs type words 0x5752ss01 / 0x5752ss02
--                                                     (ss: scheme, 0 WARC, 1 TEAR, 2 TFRCP)
--
-- All integers are big-endian, times are nanoseconds, rates and loss rates IEEE-754 doubles
-- where tfcc sends them so. A datagram is recognised by its type word (heuristically, on any
-- port) and, on the testbed's ports (5001 + flow number; preference "ports"), also when another
-- dissector claims the port first (Wireshark 4.0 gives 5001 to CPFI). On the testbed a flow's
-- receiver has that port and its sender an ephemeral one (32768 and up), so Wireshark's lower-port
-- rule picks the receiver's; in the simulator's files both ends have it. tfcc's TCP model is
-- written to pcap as real TCP and needs no dissector, as the testbed's kernel TCP does not.
--
-- Use: wireshark -X lua_script:tools/wireshark/tfcc.lua run/trace-bottleneck.pcap
--      tshark -X lua_script:tools/wireshark/tfcc.lua -r run/trace-bottleneck.pcap -Y tfcc.tfrc.p
-- or copy the file into Wireshark's personal plugins folder (Help > About > Folders).

local tfcc = Proto("tfcc", "tfcc congestion control")

local KINDS = {
    [1] = "raw", [2] = "tfrc-data", [3] = "tfrc-feedback", [4] = "tfwc-data",
    [5] = "tfwc-ack", [6] = "rate-data", [7] = "rate-feedback",
}
local MODES = { [0] = "init-rtt", [1] = "slowstart", [2] = "congestion-control", [4] = "forced-congestion-control" }
local SCHEMES = { [0] = "warc", [1] = "tear", [2] = "tfrcp" }
local STATES = { [0] = "received", [3] = "not received" }

-- The kind names are trace.parquet's `kind` column, so a capture filters as a trace is grouped.
local f = {
    kind = ProtoField.string("tfcc.kind", "Kind"),
    word = ProtoField.uint32("tfcc.type", "Type word", base.HEX),
    seq = ProtoField.uint64("tfcc.seq", "Sequence number"),
    sent = ProtoField.uint64("tfcc.sent_at_ns", "Send time (ns)"),
    tfrc_rtt = ProtoField.uint64("tfcc.tfrc.rtt_ns", "Smoothed RTT (ns)"),
    tfrc_rtt_sample = ProtoField.uint64("tfcc.tfrc.rtt_sample_ns", "Latest RTT sample (ns)"),
    tfrc_rate = ProtoField.uint32("tfcc.tfrc.rate", "Sending rate (bytes/s)"),
    -- One word: the mode code in the low byte, the sender's round (mod 2^24) above it.
    tfrc_mode = ProtoField.uint32("tfcc.tfrc.mode", "Mode", base.DEC, MODES, 0x000000FF),
    tfrc_round = ProtoField.uint32("tfcc.tfrc.round", "Sender round (mod 2^24)", base.DEC, nil, 0xFFFFFF00),
    tfrc_seq_echo = ProtoField.uint64("tfcc.tfrc.seq_echo", "Echoed sequence number"),
    tfrc_ts_echo = ProtoField.uint64("tfcc.tfrc.ts_echo_ns", "Echoed send time (ns)"),
    tfrc_delay = ProtoField.uint64("tfcc.tfrc.t_delay_ns", "t_delay (ns)"),
    tfrc_x_recv = ProtoField.uint32("tfcc.tfrc.x_recv", "X_recv (bytes/s)"),
    tfrc_p = ProtoField.double("tfcc.tfrc.p", "Loss event rate p"),
    tfwc_aoa_present = ProtoField.bool("tfcc.tfwc.aoa_present", "Ack of Ack present"),
    tfwc_aoa = ProtoField.uint64("tfcc.tfwc.aoa", "Ack of Ack"),
    tfwc_runs = ProtoField.uint16("tfcc.tfwc.runs", "Ack Vector runs"),
    tfwc_head = ProtoField.uint64("tfcc.tfwc.head", "Ack Vector head"),
    tfwc_echo = ProtoField.uint64("tfcc.tfwc.echo_ns", "Echoed send time (ns)"),
    tfwc_run = ProtoField.uint8("tfcc.tfwc.run", "Run", base.HEX),
    tfwc_state = ProtoField.uint8("tfcc.tfwc.run.state", "State", base.DEC, STATES, 0xc0),
    tfwc_len = ProtoField.uint8("tfcc.tfwc.run.length", "Length - 1", base.DEC, nil, 0x3f),
    tfwc_lost = ProtoField.uint32("tfcc.tfwc.not_received", "Numbers not received"),
    rate_scheme = ProtoField.uint8("tfcc.rate.scheme", "Scheme", base.DEC, SCHEMES),
    rate_rtt = ProtoField.uint64("tfcc.rate.rtt_ns", "Sender SRTT (ns)"),
    rate_rto = ProtoField.uint64("tfcc.rate.rto_ns", "Sender RTO (ns)"),
    rate_echo = ProtoField.uint64("tfcc.rate.echo_ns", "Echoed send time (ns)"),
    rate_hold = ProtoField.uint64("tfcc.rate.hold_ns", "Hold time (ns)"),
    rate_rate = ProtoField.double("tfcc.rate.rate", "Rate for next round (packets/RTT)"),
}
tfcc.fields = f

local e_short = ProtoExpert.new("tfcc.short", "tfcc header truncated", expert.group.MALFORMED, expert.severity.ERROR)
local e_value = ProtoExpert.new("tfcc.bad_value", "value out of its domain", expert.group.MALFORMED, expert.severity.ERROR)
tfcc.experts = { e_short, e_value }

tfcc.prefs.ports = Pref.range("UDP ports", "5001-6000", "Ports tried first (the testbed's plan: 5001 + flow)", 65535)

local RAW_WORD = 0x54460110
local TFRC_DATA, TFRC_FB = 0x54460301, 0x54460302

-- What the datagram in `tvb` is, by its type word: a KINDS number, or nil.
local function classify(tvb)
    local n = tvb:captured_len()
    if n < 4 then return nil end
    local w = tvb(0, 4):uint()
    if w == RAW_WORD then return 1 end
    if w == TFRC_DATA then return 2 end
    if w == TFRC_FB then return 3 end
    if bit.band(w, 0xffff0000) == 0x57520000 and SCHEMES[bit.rshift(bit.band(w, 0xff00), 8)] then
        local t = bit.band(w, 0xff)
        if t == 1 then return 6 end
        if t == 2 then return 7 end
    end
    local b0, b1, res = tvb(0, 1):uint(), tvb(1, 1):uint(), tvb(2, 2):uint()
    if b0 == 1 and (b1 == 0 or b1 == 1) and res == 0 and tvb:reported_len() >= 28 then return 4 end
    if b0 == 2 and b1 == 0 and tvb:reported_len() >= 20 + res then
        -- every run byte in a known state, where captured
        for i = 20, math.min(20 + res, n) - 1 do
            local s = bit.rshift(tvb(i, 1):uint(), 6)
            if s ~= 0 and s ~= 3 then return nil end
        end
        return 5
    end
    return nil
end

local LEN = { [1] = 20, [2] = 44, [3] = 40, [4] = 28, [5] = 20, [6] = 36, [7] = 28 }

local function dissect(tvb, pinfo, tree, kind)
    local need = LEN[kind]
    pinfo.cols.protocol = "tfcc"
    local t = tree:add(tfcc, tvb(0, math.min(tvb:captured_len(), need)))
    t:add(f.kind, KINDS[kind]):set_generated()
    if tvb:captured_len() < need then
        t:add_proto_expert_info(e_short, string.format("need %d bytes, captured %d", need, tvb:captured_len()))
        return tvb:captured_len()
    end
    local info
    if kind == 1 then
        t:add(f.word, tvb(0, 4))
        t:add(f.seq, tvb(4, 8)); t:add(f.sent, tvb(12, 8))
        info = string.format("raw seq=%s", tvb(4, 8):uint64())
    elseif kind == 2 then
        t:add(f.word, tvb(0, 4))
        t:add(f.seq, tvb(4, 8)); t:add(f.sent, tvb(12, 8))
        t:add(f.tfrc_rtt, tvb(20, 8)); t:add(f.tfrc_rtt_sample, tvb(28, 8))
        t:add(f.tfrc_rate, tvb(36, 4))
        local m = t:add(f.tfrc_mode, tvb(40, 4))
        if not MODES[tvb(43, 1):uint()] then m:add_proto_expert_info(e_value, "unknown mode code") end
        t:add(f.tfrc_round, tvb(40, 4))
        info = string.format("TFRC data seq=%s rate=%d B/s", tvb(4, 8):uint64(), tvb(36, 4):uint())
    elseif kind == 3 then
        t:add(f.word, tvb(0, 4))
        t:add(f.tfrc_seq_echo, tvb(4, 8)); t:add(f.tfrc_ts_echo, tvb(12, 8))
        t:add(f.tfrc_delay, tvb(20, 8)); t:add(f.tfrc_x_recv, tvb(28, 4))
        local p = tvb(32, 8):float()
        local pi = t:add(f.tfrc_p, tvb(32, 8))
        if not (p >= 0 and p <= 1) then pi:add_proto_expert_info(e_value, "p outside [0, 1]") end
        info = string.format("TFRC feedback echo=%s X_recv=%d B/s p=%.6g", tvb(4, 8):uint64(), tvb(28, 4):uint(), p)
    elseif kind == 4 then
        local aoa = bit.band(tvb(1, 1):uint(), 1) == 1
        t:add(f.tfwc_aoa_present, tvb(1, 1), aoa)
        t:add(f.seq, tvb(4, 8)); t:add(f.sent, tvb(12, 8))
        if aoa then t:add(f.tfwc_aoa, tvb(20, 8)) end
        info = string.format("TFWC data seq=%s%s", tvb(4, 8):uint64(), aoa and (" aoa=" .. tostring(tvb(20, 8):uint64())) or "")
    elseif kind == 5 then
        local runs = tvb(2, 2):uint()
        t:add(f.tfwc_runs, tvb(2, 2)); t:add(f.tfwc_head, tvb(4, 8)); t:add(f.tfwc_echo, tvb(12, 8))
        local have = math.min(runs, tvb:captured_len() - 20)
        local lost = 0
        if have > 0 then
            local rt = t:add(tvb(20, have), string.format("Ack Vector: %d runs from the head down", runs))
            for i = 0, have - 1 do
                local b = tvb(20 + i, 1):uint()
                local r = rt:add(f.tfwc_run, tvb(20 + i, 1))
                r:add(f.tfwc_state, tvb(20 + i, 1)); r:add(f.tfwc_len, tvb(20 + i, 1))
                r:append_text(string.format(" (%s x%d)", STATES[bit.rshift(b, 6)] or "?", bit.band(b, 0x3f) + 1))
                if bit.rshift(b, 6) == 3 then lost = lost + bit.band(b, 0x3f) + 1 end
            end
            t:add(f.tfwc_lost, lost):set_generated()
            if have < runs then t:add_proto_expert_info(e_short, "Ack Vector runs cut by the capture") end
        end
        info = string.format("TFWC ack head=%s runs=%d", tvb(4, 8):uint64(), runs)
    elseif kind == 6 or kind == 7 then
        t:add(f.word, tvb(0, 4))
        local s = tvb(2, 1):uint()
        t:add(f.rate_scheme, tvb(2, 1))
        if kind == 6 then
            t:add(f.seq, tvb(4, 8)); t:add(f.sent, tvb(12, 8))
            t:add(f.rate_rtt, tvb(20, 8)); t:add(f.rate_rto, tvb(28, 8))
            info = string.format("%s data seq=%s", SCHEMES[s]:upper(), tvb(4, 8):uint64())
        else
            t:add(f.rate_echo, tvb(4, 8)); t:add(f.rate_hold, tvb(12, 8))
            local r = tvb(20, 8):float()
            local ri = t:add(f.rate_rate, tvb(20, 8))
            if not (r >= 0 and r < math.huge) then ri:add_proto_expert_info(e_value, "rate not finite and >= 0") end
            info = string.format("%s report rate=%.4g pkt/RTT", SCHEMES[s]:upper(), r)
        end
    end
    pinfo.cols.info = info
    return need
end

function tfcc.dissector(tvb, pinfo, tree)
    local kind = classify(tvb)
    if not kind then return 0 end
    return dissect(tvb, pinfo, tree, kind)
end

local function heuristic(tvb, pinfo, tree)
    local kind = classify(tvb)
    if not kind then return false end
    dissect(tvb, pinfo, tree, kind)
    return true
end
tfcc:register_heuristic("udp", heuristic)

local registered
function tfcc.prefs_changed()
    local udp = DissectorTable.get("udp.port")
    if registered then udp:remove(registered, tfcc) end
    registered = tfcc.prefs.ports
    udp:add(registered, tfcc)
end
DissectorTable.get("udp.port"):add(tfcc.prefs.ports, tfcc)
registered = tfcc.prefs.ports
