-- Wireshark / tshark dissector for the tcpnc tunnel (wire format version 2, docs/wire.md).
--
--   tshark -X lua_script:contrib/wireshark/tcpnc.lua -r capture.pcap
--   wireshark -X lua_script:contrib/wireshark/tcpnc.lua     (or copy to ~/.local/lib/wireshark/plugins/)
--
-- Frames: DATA (every range form: gapped, CONTIGUOUS, CONTIGUOUS|UNIFORM, PATCHED; explicit
-- coefficients, a seed or none for SYSTEMATIC), ACK (every field and flag), BYPASS (the inner IP
-- packet handed to Wireshark's IP dissector) and KEEPALIVE. Registered on UDP port 51900 (the
-- port of the examples; preference "tcpnc.udp_port") and as a heuristic on UDP, which claims a
-- datagram only if its preamble and length are those of a valid frame. Frames that break a rule
-- of docs/wire.md section 9 get the expert info tcpnc.malformed.

local tcpnc = Proto("tcpnc", "tcpnc tunnel (TCP/NC)")

local TYPES = { [1] = "DATA", [2] = "ACK", [3] = "BYPASS", [4] = "KEEPALIVE" }

local f = tcpnc.fields
f.version = ProtoField.uint8("tcpnc.version", "Version", base.DEC)
f.type = ProtoField.uint8("tcpnc.type", "Type", base.HEX, TYPES)

-- The tunnel envelope (section 10): every datagram of a gateway with keys or `insecure = true`.
local OUTER = { [0x11] = "INTEGRITY", [0x21] = "HANDSHAKE INITIATION",
    [0x22] = "HANDSHAKE RESPONSE", [0x24] = "TRANSPORT" }
f.outer_type = ProtoField.uint8("tcpnc.envelope.type", "Envelope type", base.HEX, OUTER)
f.outer_crc = ProtoField.uint32("tcpnc.envelope.crc32c", "CRC-32C", base.HEX)
f.outer_sender = ProtoField.uint32("tcpnc.envelope.sender_index", "Sender index", base.HEX)
f.outer_receiver = ProtoField.uint32("tcpnc.envelope.receiver_index", "Receiver index", base.HEX)
f.outer_counter = ProtoField.uint64("tcpnc.envelope.counter", "Counter", base.DEC)
f.outer_noise = ProtoField.bytes("tcpnc.envelope.noise", "Noise message")
f.outer_mac1 = ProtoField.bytes("tcpnc.envelope.mac1", "mac1")
f.outer_ciphertext = ProtoField.bytes("tcpnc.envelope.ciphertext", "Encrypted frame")
f.outer_tag = ProtoField.bytes("tcpnc.envelope.tag", "Poly1305 tag")

-- Flow identity (section 2)
f.flow_src = ProtoField.ipv4("tcpnc.flow.src", "Source address")
f.flow_dst = ProtoField.ipv4("tcpnc.flow.dst", "Destination address")
f.flow_src6 = ProtoField.ipv6("tcpnc.flow.src6", "Source address")
f.flow_dst6 = ProtoField.ipv6("tcpnc.flow.dst6", "Destination address")
f.flow_sport = ProtoField.uint16("tcpnc.flow.srcport", "Source port", base.DEC)
f.flow_dport = ProtoField.uint16("tcpnc.flow.dstport", "Destination port", base.DEC)

-- DATA (section 3)
f.data_flags = ProtoField.uint8("tcpnc.data.flags", "Flags", base.HEX)
f.data_redundant = ProtoField.bool("tcpnc.data.flags.redundant", "REDUNDANT", 8, nil, 0x01)
f.data_systematic = ProtoField.bool("tcpnc.data.flags.systematic", "SYSTEMATIC", 8, nil, 0x02)
f.data_seeded = ProtoField.bool("tcpnc.data.flags.seeded", "SEEDED", 8, nil, 0x04)
f.data_flush = ProtoField.bool("tcpnc.data.flags.flush", "FLUSH", 8, nil, 0x08)
f.data_contiguous = ProtoField.bool("tcpnc.data.flags.contiguous", "CONTIGUOUS", 8, nil, 0x10)
f.data_uniform = ProtoField.bool("tcpnc.data.flags.uniform", "UNIFORM", 8, nil, 0x20)
f.data_reserved = ProtoField.uint8("tcpnc.data.flags.reserved", "Reserved", base.HEX, nil, 0x40)
f.data_ipv6 = ProtoField.bool("tcpnc.data.flags.ipv6", "IPV6", 8, nil, 0x80)
f.data_n = ProtoField.uint8("tcpnc.data.n", "Packets combined (n)", base.DEC)
f.data_pid = ProtoField.uint32("tcpnc.data.pid", "Pid", base.DEC)
f.data_base = ProtoField.uint32("tcpnc.data.base", "Base", base.DEC)
f.data_first_index = ProtoField.uint32("tcpnc.data.first_index", "First index", base.DEC)
f.data_form = ProtoField.string("tcpnc.data.range_form", "Range form")
f.data_start = ProtoField.uint32("tcpnc.data.start", "Start_1", base.DEC)
f.data_len = ProtoField.uint16("tcpnc.data.len", "len_i", base.DEC)
f.data_gap = ProtoField.uint16("tcpnc.data.gap", "gap_i", base.DEC)
f.data_shared_len = ProtoField.uint16("tcpnc.data.shared_len", "len (packets 1..n-1)", base.DEC)
f.data_last_len = ProtoField.uint16("tcpnc.data.last_len", "len_n", base.DEC)
f.data_patched_count = ProtoField.uint8("tcpnc.data.patched_count", "Shorter packets listed (k)", base.DEC)
f.data_patched_pos = ProtoField.uint8("tcpnc.data.patched_pos", "Position (0-based)", base.DEC)
f.data_seq_start = ProtoField.uint32("tcpnc.data.seq_start", "Start_i", base.DEC)
f.data_seq_end = ProtoField.uint32("tcpnc.data.seq_end", "End_i", base.DEC)
f.data_coef = ProtoField.uint8("tcpnc.data.coef", "Coefficient", base.HEX)
f.data_seed = ProtoField.uint32("tcpnc.data.seed", "Seed", base.HEX)
f.data_payload = ProtoField.bytes("tcpnc.data.payload", "Coded payload")
f.data_header_len = ProtoField.uint16("tcpnc.data.header_len", "Header length", base.DEC)

-- ACK (section 4)
f.ack_flags = ProtoField.uint16("tcpnc.ack.flags", "Flags", base.HEX)
f.ack_redundant = ProtoField.bool("tcpnc.ack.flags.redundant", "REDUNDANT", 16, nil, 0x0001)
f.ack_dependent = ProtoField.bool("tcpnc.ack.flags.dependent", "DEPENDENT", 16, nil, 0x0002)
f.ack_pause = ProtoField.bool("tcpnc.ack.flags.pause", "PAUSE", 16, nil, 0x0004)
f.ack_update = ProtoField.bool("tcpnc.ack.flags.update", "UPDATE", 16, nil, 0x0008)
f.ack_reserved = ProtoField.uint16("tcpnc.ack.flags.reserved", "Reserved", base.HEX, nil, 0x7ff0)
f.ack_ipv6 = ProtoField.bool("tcpnc.ack.flags.ipv6", "IPV6", 16, nil, 0x8000)
f.ack_ack = ProtoField.uint32("tcpnc.ack.ack", "Ack (first unseen byte)", base.DEC)
f.ack_window = ProtoField.uint32("tcpnc.ack.window", "Window (bytes, unscaled)", base.DEC)
f.ack_pid_echo = ProtoField.uint32("tcpnc.ack.pid_echo", "Pid echo", base.DEC)
f.ack_loss_bitmap = ProtoField.uint32("tcpnc.ack.loss_bitmap", "Loss bitmap", base.HEX)
f.ack_lost = ProtoField.uint32("tcpnc.ack.lost_pid", "Pid not received", base.DEC)
f.ack_dependent_seq = ProtoField.uint32("tcpnc.ack.dependent_seq", "Dependent seq", base.DEC)
f.ack_nlp = ProtoField.uint16("tcpnc.ack.nlp", "N_lp (lost DoFs)", base.DEC)
f.ack_unordering = ProtoField.uint16("tcpnc.ack.unordering", "Unordering length", base.DEC)

-- KEEPALIVE (section 6)
f.ka_flags = ProtoField.uint8("tcpnc.keepalive.flags", "Flags", base.HEX)
f.ka_reply = ProtoField.bool("tcpnc.keepalive.reply", "REPLY", 8, nil, 0x01)
f.ka_reserved_bits = ProtoField.uint8("tcpnc.keepalive.flags.reserved", "Reserved", base.HEX, nil, 0xfe)
f.ka_reserved = ProtoField.uint8("tcpnc.keepalive.reserved", "Reserved byte", base.HEX)
f.ka_nonce = ProtoField.uint64("tcpnc.keepalive.nonce", "Nonce", base.HEX)

local malformed = ProtoExpert.new("tcpnc.malformed", "Malformed tcpnc frame",
    expert.group.MALFORMED, expert.severity.ERROR)
tcpnc.experts = { malformed }

local ip_dissector = Dissector.get("ip")
local ipv6_dissector = Dissector.get("ipv6")

tcpnc.prefs.udp_port = Pref.uint("UDP port", 51900, "UDP port of the tcpnc tunnel")

local U32 = 4294967296

local function bad(tree, tvb, text)
    tree:add_proto_expert_info(malformed, text)
    return tvb:len()
end

-- Flow identity at offset 4; returns its length and a "src -> dst" text.
local function add_flow(tree, tvb, v6)
    local t = tree:add(tcpnc, tvb(4, v6 and 36 or 12), "Flow (data direction)")
    local src, dst, sp, dp
    if v6 then
        t:add(f.flow_src6, tvb(4, 16)); t:add(f.flow_dst6, tvb(20, 16))
        src, dst = "[" .. tostring(tvb(4, 16):ipv6()) .. "]", "[" .. tostring(tvb(20, 16):ipv6()) .. "]"
        sp, dp = tvb(36, 2), tvb(38, 2)
    else
        t:add(f.flow_src, tvb(4, 4)); t:add(f.flow_dst, tvb(8, 4))
        src, dst = tostring(tvb(4, 4):ipv4()), tostring(tvb(8, 4):ipv4())
        sp, dp = tvb(12, 2), tvb(14, 2)
    end
    t:add(f.flow_sport, sp); t:add(f.flow_dport, dp)
    local text = src .. ":" .. sp:uint() .. " -> " .. dst .. ":" .. dp:uint()
    t:append_text(": " .. text)
    return v6 and 36 or 12, text
end

-- Range section length R for n packets and the flags (k: PATCHED's listed packets).
local function range_len(n, contiguous, uniform, k)
    if contiguous and uniform then return 8 end
    if contiguous then return 2 * n + 4 end
    if uniform then return 7 + 3 * k end
    return 4 * n + 2
end

local function add_packet(tree, tvb, i, start, len)
    local last = (start + len) % U32
    local item = tree:add(tcpnc, tvb, "Packet " .. i .. ": " .. start .. "..=" .. last)
    item:add(f.data_seq_start, start):set_generated()
    item:add(f.data_seq_end, last):set_generated()
    return (last + 1) % U32
end

local function dissect_ranges(t, tvb, off, n, contiguous, uniform, k)
    local r = t:add(tcpnc, tvb(off, range_len(n, contiguous, uniform, k)), "Ranges")
    local start = tvb(off, 4):uint()
    r:add(f.data_start, tvb(off, 4))
    local form
    if contiguous and uniform then
        form = "uniform"
        r:add(f.data_shared_len, tvb(off + 4, 2)); r:add(f.data_last_len, tvb(off + 6, 2))
        local shared, lastl = tvb(off + 4, 2):uint(), tvb(off + 6, 2):uint()
        for i = 1, n do
            start = add_packet(r, tvb(off, 8), i, start, i < n and shared or lastl)
        end
    elseif uniform then
        -- PATCHED: the longest len shared, then k (position, len) entries in increasing order.
        form = "patched"
        r:add(f.data_shared_len, tvb(off + 4, 2)); r:add(f.data_patched_count, tvb(off + 6, 1))
        local shared, j = tvb(off + 4, 2):uint(), 0
        for i = 1, n do
            local e = off + 7 + 3 * j
            if j < k and tvb(e, 1):uint() == i - 1 then
                r:add(f.data_patched_pos, tvb(e, 1)); r:add(f.data_len, tvb(e + 1, 2))
                start = add_packet(r, tvb(e, 3), i, start, tvb(e + 1, 2):uint())
                j = j + 1
            else
                start = add_packet(r, tvb(off + 4, 2), i, start, shared)
            end
        end
    elseif contiguous then
        form = "contiguous"
        for i = 1, n do
            local l = tvb(off + 4 + 2 * (i - 1), 2)
            r:add(f.data_len, l)
            start = add_packet(r, l, i, start, l:uint())
        end
    else
        form = "gapped"
        local l = tvb(off + 4, 2)
        r:add(f.data_len, l)
        start = add_packet(r, l, 1, start, l:uint())
        for i = 2, n do
            local g, l2 = tvb(off + 2 + 4 * (i - 1), 2), tvb(off + 4 + 4 * (i - 1), 2)
            r:add(f.data_gap, g); r:add(f.data_len, l2)
            start = add_packet(r, tvb(off + 2 + 4 * (i - 1), 4), i, (start + g:uint()) % U32, l2:uint())
        end
    end
    r:append_text(" (" .. form .. ")")
    t:add(f.data_form, form):set_generated()
end

local function dissect_data(tvb, pinfo, tree)
    local len = tvb:len()
    if len < 4 then return bad(tree, tvb, "DATA shorter than its preamble") end
    local flags, n = tvb(2, 1):uint(), tvb(3, 1):uint()
    local v6, contiguous = bit.band(flags, 0x80) ~= 0, bit.band(flags, 0x10) ~= 0
    local uniform, seeded = bit.band(flags, 0x20) ~= 0, bit.band(flags, 0x04) ~= 0
    local systematic = bit.band(flags, 0x02) ~= 0
    local ft = tree:add(f.data_flags, tvb(2, 1))
    for _, b in ipairs({ f.data_redundant, f.data_systematic, f.data_seeded, f.data_flush,
        f.data_contiguous, f.data_uniform, f.data_reserved, f.data_ipv6 }) do
        ft:add(b, tvb(2, 1))
    end
    tree:add(f.data_n, tvb(3, 1))
    local F = v6 and 36 or 12
    local k = 0
    if uniform and not contiguous then
        if len < 16 + F + 7 then return bad(tree, tvb, "DATA shorter than its header") end
        k = tvb(16 + F + 6, 1):uint()
    end
    local R = range_len(n, contiguous, uniform, k)
    local C = systematic and 0 or (seeded and 4 or n)
    local H = 16 + F + R + C
    if len < H then return bad(tree, tvb, "DATA shorter than its header (" .. H .. " B)") end
    if n == 0 then return bad(tree, tvb, "DATA n = 0 (BadCount)") end
    if bit.band(flags, 0x40) ~= 0 then return bad(tree, tvb, "reserved DATA flag set") end
    if (seeded and systematic) or (systematic and n ~= 1)
        or (contiguous and n < 2) or (uniform and n < 3) then
        return bad(tree, tvb, "invalid DATA flag combination (BadFlags)")
    end
    local _, flow = add_flow(tree, tvb, v6)
    tree:add(f.data_pid, tvb(4 + F, 4)); tree:add(f.data_base, tvb(8 + F, 4))
    tree:add(f.data_first_index, tvb(12 + F, 4))
    dissect_ranges(tree, tvb, 16 + F, n, contiguous, uniform, k)
    local coff = 16 + F + R
    if seeded then
        tree:add(f.data_seed, tvb(coff, 4))
    elseif not systematic then
        local ct = tree:add(tcpnc, tvb(coff, n), "Coefficients")
        for i = 0, n - 1 do ct:add(f.data_coef, tvb(coff + i, 1)) end
    end
    tree:add(f.data_header_len, H):set_generated()
    if len > H then tree:add(f.data_payload, tvb(H)) end
    pinfo.cols.info:set(string.format("DATA %s Pid %d n=%d", flow, tvb(4 + F, 4):uint(), n))
    return len
end

local function dissect_ack(tvb, pinfo, tree)
    local len = tvb:len()
    if len < 4 then return bad(tree, tvb, "ACK shorter than its preamble") end
    local flags = tvb(2, 2):uint()
    local v6 = bit.band(flags, 0x8000) ~= 0
    local F = v6 and 36 or 12
    if len ~= 28 + F then return bad(tree, tvb, "ACK must be " .. (28 + F) .. " bytes (BadLength)") end
    local ft = tree:add(f.ack_flags, tvb(2, 2))
    for _, b in ipairs({ f.ack_redundant, f.ack_dependent, f.ack_pause, f.ack_update,
        f.ack_reserved, f.ack_ipv6 }) do
        ft:add(b, tvb(2, 2))
    end
    if bit.band(flags, 0x7ff0) ~= 0 then bad(tree, tvb, "reserved ACK flag set") end
    local _, flow = add_flow(tree, tvb, v6)
    tree:add(f.ack_ack, tvb(4 + F, 4)); tree:add(f.ack_window, tvb(8 + F, 4))
    local echo = tvb(12 + F, 4):uint()
    tree:add(f.ack_pid_echo, tvb(12 + F, 4))
    local bt = tree:add(f.ack_loss_bitmap, tvb(16 + F, 4))
    local bitmap = tvb(16 + F, 4):uint()
    for i = 0, 31 do
        if bit.band(bitmap, bit.lshift(1, i)) ~= 0 then
            bt:add(f.ack_lost, (echo - 1 - i) % U32):set_generated()
        end
    end
    tree:add(f.ack_dependent_seq, tvb(20 + F, 4))
    if bit.band(flags, 0x0002) == 0 and tvb(20 + F, 4):uint() ~= 0 then
        bad(tree, tvb, "dependent_seq set without DEPENDENT (UnusedFieldNotZero)")
    end
    tree:add(f.ack_nlp, tvb(24 + F, 2)); tree:add(f.ack_unordering, tvb(26 + F, 2))
    pinfo.cols.info:set(string.format("ACK %s ack=%d echo=%d", flow, tvb(4 + F, 4):uint(), echo))
    return len
end

local function dissect_bypass(tvb, pinfo, tree)
    if tvb:len() < 3 then return bad(tree, tvb, "BYPASS without an IP packet (Truncated)") end
    local version = bit.rshift(tvb(2, 1):uint(), 4)
    if version ~= 4 and version ~= 6 then return bad(tree, tvb, "BYPASS packet is not IPv4/IPv6") end
    pinfo.cols.info:set("BYPASS")
    local inner = tvb(2):tvb()
    if version == 4 then ip_dissector:call(inner, pinfo, tree) else ipv6_dissector:call(inner, pinfo, tree) end
    return tvb:len()
end

local function dissect_keepalive(tvb, pinfo, tree)
    if tvb:len() ~= 12 then return bad(tree, tvb, "KEEPALIVE must be 12 bytes (BadLength)") end
    local ft = tree:add(f.ka_flags, tvb(2, 1))
    ft:add(f.ka_reply, tvb(2, 1)); ft:add(f.ka_reserved_bits, tvb(2, 1))
    tree:add(f.ka_reserved, tvb(3, 1)); tree:add(f.ka_nonce, tvb(4, 8))
    if bit.band(tvb(2, 1):uint(), 0xfe) ~= 0 or tvb(3, 1):uint() ~= 0 then
        bad(tree, tvb, "reserved KEEPALIVE bits set")
    end
    local kind = bit.band(tvb(2, 1):uint(), 1) == 1 and "reply" or "probe"
    pinfo.cols.info:set("KEEPALIVE " .. kind .. " nonce 0x" .. tvb(4, 8):bytes():tohex():lower())
    return 12
end

local DISSECT = { [1] = dissect_data, [2] = dissect_ack, [3] = dissect_bypass, [4] = dissect_keepalive }

-- Envelope sizes (section 10): fixed for handshakes, minimum for the others.
local OUTER_LEN = { [0x11] = 5, [0x21] = 140, [0x22] = 84, [0x24] = 32 }

local function dissect_frame(tvb, pinfo, tree)
    if tvb:len() < 2 then return bad(tree, tvb, "frame shorter than 2 bytes") end
    local root = tree:add(tcpnc, tvb(), "tcpnc tunnel frame")
    root:add(f.version, tvb(0, 1)); root:add(f.type, tvb(1, 1))
    local version, kind = tvb(0, 1):uint(), tvb(1, 1):uint()
    if version ~= 2 then return bad(root, tvb, "version " .. version .. " (BadVersion)") end
    local handler = DISSECT[kind]
    if handler == nil then return bad(root, tvb, "type " .. kind .. " (UnknownType)") end
    root:append_text(": " .. TYPES[kind])
    return handler(tvb, pinfo, root)
end

-- One envelope (section 10): the integrity mode's frame is dissected, the rest is shown as is.
local function dissect_envelope(tvb, pinfo, tree)
    local kind, len = tvb(0, 1):uint(), tvb:len()
    local env = tree:add(tcpnc, tvb(), "tcpnc envelope: " .. OUTER[kind])
    env:add(f.outer_type, tvb(0, 1))
    local fixed = OUTER_LEN[kind]
    local exact = kind == 0x21 or kind == 0x22
    if len < fixed or (exact and len ~= fixed) then
        return bad(env, tvb, OUTER[kind] .. " of " .. len .. " bytes (malformed)")
    end
    if kind == 0x11 then
        env:add(f.outer_crc, tvb(len - 4, 4))
        dissect_frame(tvb(1, len - 5):tvb(), pinfo, env)
        return len
    elseif kind == 0x21 then
        env:add(f.outer_sender, tvb(4, 4)); env:add(f.outer_noise, tvb(8, 116))
        env:add(f.outer_mac1, tvb(124, 16))
    elseif kind == 0x22 then
        env:add(f.outer_sender, tvb(4, 4)); env:add(f.outer_receiver, tvb(8, 4))
        env:add(f.outer_noise, tvb(12, 56)); env:add(f.outer_mac1, tvb(68, 16))
    else
        env:add(f.outer_receiver, tvb(4, 4)); env:add(f.outer_counter, tvb(8, 8))
        env:add(f.outer_ciphertext, tvb(16, len - 32)); env:add(f.outer_tag, tvb(len - 16, 16))
    end
    pinfo.cols.info:set(OUTER[kind])
    return len
end

function tcpnc.dissector(tvb, pinfo, tree)
    if tvb:len() < 1 then return 0 end
    pinfo.cols.protocol:set("tcpnc")
    if OUTER[tvb(0, 1):uint()] ~= nil then return dissect_envelope(tvb, pinfo, tree) end
    return dissect_frame(tvb, pinfo, tree)
end

-- Heuristic: claims a UDP payload only if it looks like a whole valid-sized frame.
local function heuristic(tvb, pinfo, tree)
    local len = tvb:len()
    local outer = tvb:len() > 0 and OUTER_LEN[tvb(0, 1):uint()] or nil
    if outer ~= nil then
        local kind = tvb(0, 1):uint()
        if len < outer or ((kind == 0x21 or kind == 0x22) and len ~= outer) then return false end
        tcpnc.dissector(tvb, pinfo, tree)
        return true
    end
    if len < 4 or tvb(0, 1):uint() ~= 2 then return false end
    local kind = tvb(1, 1):uint()
    if kind == 2 then
        local v6 = bit.band(tvb(2, 1):uint(), 0x80) ~= 0
        if len ~= (v6 and 64 or 40) then return false end
    elseif kind == 4 then
        if len ~= 12 then return false end
    elseif kind == 3 then
        local v = bit.rshift(tvb(2, 1):uint(), 4)
        if (v ~= 4 and v ~= 6) or len < 22 then return false end
    elseif kind == 1 then
        local flags, n = tvb(2, 1):uint(), tvb(3, 1):uint()
        local F = bit.band(flags, 0x80) ~= 0 and 36 or 12
        local contiguous, uniform = bit.band(flags, 0x10) ~= 0, bit.band(flags, 0x20) ~= 0
        local k = 0
        if uniform and not contiguous then
            if len < 16 + F + 7 then return false end
            k = tvb(16 + F + 6, 1):uint()
        end
        local R = range_len(n, contiguous, uniform, k)
        local C = bit.band(flags, 0x02) ~= 0 and 0 or (bit.band(flags, 0x04) ~= 0 and 4 or n)
        if n == 0 or len < 16 + F + R + C then return false end
    else
        return false
    end
    tcpnc.dissector(tvb, pinfo, tree)
    return true
end

local registered_port = 0
function tcpnc.prefs_changed()
    local udp = DissectorTable.get("udp.port")
    if registered_port ~= 0 then udp:remove(registered_port, tcpnc) end
    registered_port = tcpnc.prefs.udp_port
    if registered_port ~= 0 then udp:add(registered_port, tcpnc) end
end

DissectorTable.get("udp.port"):add(51900, tcpnc)
registered_port = 51900
tcpnc:register_heuristic("udp", heuristic)
