-- nfpark.lua: a Wireshark/tshark dissector for what nfpark puts on the NF link.
--
-- What it decodes (all of them sit right after the TCP/UDP header, where the parked or sliced
-- payload began; src/park/tag.h, src/park/slicer_token.h):
--   nfpark tag (24 B)        magic 'N', version 1 | flags (parked, drop, keyed), slice, index,
--                            generation, original frame length, parked bytes, 8-byte check.
--                            Found by its magic, version and zero reserved byte.
--   QUEUE-MEM header fields  the same 24 bytes, read as QUEUE-MEM's {port, idx, id, original
--                            length}: shown when the preference mode is "queuemem".
--   PayloadPark (7 B)        ENB | OP, check, table index, clock (the P4 code's pp_h + tag +
--                            clock; --tag-format payloadpark). It has no magic: decoded only
--                            when the preference mode is "payloadpark7".
--   NFSlicer token (8 B)     on frames marked DSCP 63: core (8 bits), generation, index (log2 N
--                            bits, N = the preference slicer_entries, nfpark's default 4096);
--                            core 255 is the escape token of a whole packet.
-- Preferences (Edit > Preferences > Protocols > NFPARK, or tshark -o nfpark.mode:queuemem):
--   mode            auto (default) | queuemem | payloadpark7
--   slicer_entries  NFSlicer ring entries (--slicer-entries), a power of two; default 4096
-- Install: `nfpark dissector install` (copies this file to Wireshark's personal Lua plugin
-- folder), or run tshark with `-X lua_script:tools/wireshark/nfpark.lua`.
-- Filters: nfpark.tag.parked == 1, nfpark.qm.idx, payloadpark.index, nfslicer.index, ...
-- The check fields are shown, not verified: they are keyed by the run's secret.

local p = Proto("nfpark", "nfpark NF link (tag, PayloadPark, QUEUE-MEM, NFSlicer)")

local f = {
  magic = ProtoField.uint8("nfpark.tag.magic", "Magic", base.HEX),
  version = ProtoField.uint8("nfpark.tag.version", "Version", base.DEC, nil, 0xF0),
  parked = ProtoField.uint8("nfpark.tag.parked", "Parked (ENB)", base.DEC, nil, 0x01),
  drop = ProtoField.uint8("nfpark.tag.drop", "Drop (OP)", base.DEC, nil, 0x02),
  keyed = ProtoField.uint8("nfpark.tag.keyed", "Keyed check", base.DEC, nil, 0x04),
  slice = ProtoField.uint8("nfpark.tag.slice", "Slice (NF server)", base.DEC),
  index = ProtoField.uint32("nfpark.tag.index", "Slot index", base.DEC),
  generation = ProtoField.uint32("nfpark.tag.generation", "Generation", base.DEC),
  orig_len = ProtoField.uint16("nfpark.tag.orig_len", "Original frame length", base.DEC),
  parked_len = ProtoField.uint16("nfpark.tag.parked_len", "Parked bytes", base.DEC),
  check = ProtoField.bytes("nfpark.tag.check", "Check (SipHash-2-4 or CRC-32C)"),
  qm_port = ProtoField.uint8("nfpark.qm.port", "QUEUE-MEM port", base.DEC),
  qm_idx = ProtoField.uint32("nfpark.qm.idx", "QUEUE-MEM header-array idx", base.DEC),
  qm_id = ProtoField.uint32("nfpark.qm.id", "QUEUE-MEM id", base.DEC),
  qm_len = ProtoField.uint16("nfpark.qm.orig_len", "QUEUE-MEM original length", base.DEC),
  qm_payload = ProtoField.uint16("nfpark.qm.payload_len", "QUEUE-MEM payload bytes queued",
                                 base.DEC),
  pp_enb = ProtoField.uint8("payloadpark.enb", "ENB", base.DEC, nil, 0x80),
  pp_op = ProtoField.uint8("payloadpark.op", "OP", base.DEC, nil, 0x40),
  pp_check = ProtoField.uint16("payloadpark.check", "Check", base.HEX),
  pp_index = ProtoField.uint16("payloadpark.index", "Table index", base.DEC),
  pp_clock = ProtoField.uint16("payloadpark.clock", "Clock", base.DEC),
  sl_core = ProtoField.uint8("nfslicer.core", "Core", base.DEC),
  sl_gen = ProtoField.uint64("nfslicer.generation", "Generation", base.DEC),
  sl_index = ProtoField.uint32("nfslicer.index", "Ring index", base.DEC),
  sl_escape = ProtoField.bool("nfslicer.escape", "Escape token (whole packet)"),
}
p.fields = {}
for _, v in pairs(f) do table.insert(p.fields, v) end

p.prefs.mode = Pref.enum("Mode", 1, "What a tag after the L4 header is",
  { { 1, "auto", 1 }, { 2, "queuemem", 2 }, { 3, "payloadpark7", 3 } }, false)
p.prefs.slicer_entries = Pref.uint("NFSlicer ring entries", 4096,
  "--slicer-entries of the run (a power of two)")

-- Offset of the first byte after the TCP/UDP header and the DSCP, or nil (not IP TCP/UDP).
local function l4_end(tvb)
  local len = tvb:len()
  if len < 14 then return nil end
  local off, etype = 12, tvb(12, 2):uint()
  while (etype == 0x8100 or etype == 0x88a8) and len >= off + 6 do
    off = off + 4
    etype = tvb(off, 2):uint()
  end
  off = off + 2
  local proto, dscp
  if etype == 0x0800 then
    if len < off + 20 then return nil end
    local ihl = tvb(off, 1):bitfield(4, 4) * 4
    dscp = tvb(off + 1, 1):bitfield(0, 6)
    if tvb(off + 6, 2):bitfield(2, 14) ~= 0 then return nil end -- a later fragment
    proto = tvb(off + 9, 1):uint()
    off = off + ihl
  elseif etype == 0x86dd then
    if len < off + 40 then return nil end
    dscp = tvb(off, 2):bitfield(4, 6)
    proto = tvb(off + 6, 1):uint()
    off = off + 40
  else
    return nil
  end
  if proto == 6 and len >= off + 20 then
    return off + tvb(off + 12, 1):bitfield(0, 4) * 4, dscp
  elseif proto == 17 and len >= off + 8 then
    return off + 8, dscp
  end
  return nil
end

local function log2(n)
  local b = 0
  while n > 1 do n = math.floor(n / 2); b = b + 1 end
  return b
end

local function nfpark_tag(tvb, off, tree, pinfo)
  local t = tree:add(p, tvb(off, 24), "nfpark tag")
  t:add(f.magic, tvb(off, 1))
  t:add(f.version, tvb(off + 1, 1))
  t:add(f.parked, tvb(off + 1, 1))
  t:add(f.drop, tvb(off + 1, 1))
  t:add(f.keyed, tvb(off + 1, 1))
  t:add(f.slice, tvb(off + 2, 1))
  t:add(f.index, tvb(off + 4, 4))
  t:add(f.generation, tvb(off + 8, 4))
  t:add(f.orig_len, tvb(off + 12, 2))
  t:add(f.parked_len, tvb(off + 14, 2))
  t:add(f.check, tvb(off + 16, 8))
  if p.prefs.mode == 2 then
    local q = tree:add(p, tvb(off, 24), "QUEUE-MEM header fields")
    q:add(f.qm_port, tvb(off + 2, 1))
    q:add(f.qm_idx, tvb(off + 4, 4))
    q:add(f.qm_id, tvb(off + 8, 4))
    q:add(f.qm_len, tvb(off + 12, 2))
    q:add(f.qm_payload, tvb(off + 14, 2))
  end
  local parked = tvb(off + 1, 1):bitfield(7, 1) == 1
  pinfo.cols.info:append(string.format(" [nfpark tag %s idx %d gen %d len %d]",
    parked and "parked" or "whole", tvb(off + 4, 4):uint(), tvb(off + 8, 4):uint(),
    tvb(off + 12, 2):uint()))
end

local function payloadpark7(tvb, off, tree, pinfo)
  local t = tree:add(p, tvb(off, 7), "PayloadPark header (7 B)")
  t:add(f.pp_enb, tvb(off, 1))
  t:add(f.pp_op, tvb(off, 1))
  t:add(f.pp_check, tvb(off + 1, 2))
  t:add(f.pp_index, tvb(off + 3, 2))
  t:add(f.pp_clock, tvb(off + 5, 2))
  pinfo.cols.info:append(string.format(" [PayloadPark ENB %d idx %d]",
    tvb(off, 1):bitfield(0, 1), tvb(off + 3, 2):uint()))
end

local function slicer_token(tvb, off, tree, pinfo)
  local t = tree:add(p, tvb(off, 8), "NFSlicer token")
  local v = tvb(off, 8):uint64()
  local bits = log2(p.prefs.slicer_entries)
  local core = tvb(off, 1):uint()
  local index = v:band(UInt64(2 ^ bits - 1)):tonumber()
  local gen = v:band(UInt64(0x00FFFFFF, 0xFFFFFFFF)):rshift(bits)
  t:add(f.sl_core, tvb(off, 1))
  t:add(f.sl_gen, tvb(off, 8), gen)
  t:add(f.sl_index, tvb(off, 8), index)
  t:add(f.sl_escape, tvb(off, 1), core == 255)
  pinfo.cols.info:append(string.format(" [NFSlicer core %d idx %d]", core, index))
end

function p.dissector(tvb, pinfo, tree)
  local off, dscp = l4_end(tvb)
  if not off then return end
  local left = tvb:len() - off
  if dscp == 63 and left >= 8 then
    slicer_token(tvb, off, tree, pinfo)
  elseif p.prefs.mode == 3 then
    if left >= 7 then payloadpark7(tvb, off, tree, pinfo) end
  elseif left >= 24 and tvb(off, 1):uint() == 0x4E and tvb(off + 1, 1):bitfield(0, 4) == 1
      and tvb(off + 3, 1):uint() == 0 then
    nfpark_tag(tvb, off, tree, pinfo)
  end
end

register_postdissector(p)
