// Fuzz target `inputs`: what nfpark reads from the outside — capture files and the frames in
// them. The first byte picks the concern, the rest is the input:
//   even: a pcap/pcapng file for TraceReader (and every record through the frame checks)
//   odd:  one frame for the packet parser and everything that reads headers off it
//
// Properties (each violation aborts; see check.h):
//  reader  never reads outside the file (the file is an exact heap block: mem_file.h); a failed
//          open or read leaves one error line naming the file; every record lies in the file,
//          its length <= its wire length, and the reader stops after at most one record per
//          12 bytes; load_trace() returns the same records as next(); records written by
//          PcapWriter read back with the same bytes, lengths and timestamps.
//  parser  never reads outside the frame (exact heap block); a kOk layout is self-consistent
//          (offsets ordered and inside the frame); the flow key exists and reverses; checksums
//          and NFSlicer's slice inspection stay inside the frame; rewriting the DSCP (RFC 1624
//          patch) changes only the DSCP bits and keeps a valid IPv4 header checksum valid;
//          Reframer's classification never reads out of bounds.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"
#include "core/parse.h"
#include "fuzz/check.h"
#include "fuzz/mem_file.h"
#include "park/slicer_token.h"
#include "reframe/classify.h"
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::fuzz {
namespace {

// A frame in a heap block of exactly its length.
struct Exact {
  std::unique_ptr<uint8_t[]> p;
  uint32_t len;
  Exact(const uint8_t* d, uint32_t n) : p(new uint8_t[n ? n : 1]), len(n) {
    if (n) std::memcpy(p.get(), d, n);
  }
};

void check_layout(const uint8_t* d, uint32_t len, const PacketLayout& L) {
  FUZZ_CHECK(L.captured == len, "captured %u != len %u", L.captured, len);
  if (L.status == ParseStatus::kNotIp) FUZZ_CHECK(L.ip_version == 0, "not IP but ip_version set");
  if (!L.ok()) return;
  FUZZ_CHECK(L.ip_version == 4 || L.ip_version == 6, "ok with ip_version %u", L.ip_version);
  FUZZ_CHECK(L.vlans <= 2, "%u VLAN tags", L.vlans);
  FUZZ_CHECK(L.l3_off >= 14 && L.l3_off <= len, "l3_off %u, len %u", L.l3_off, len);
  FUZZ_CHECK(L.payload_off >= L.l3_off && L.payload_off <= len, "payload_off %u (l3 %u, len %u)",
             L.payload_off, L.l3_off, len);
  if (L.l4_off) {
    FUZZ_CHECK(L.l4_off > L.l3_off && L.l4_off <= L.payload_off, "l4_off %u outside (%u, %u]",
               L.l4_off, L.l3_off, L.payload_off);
    FUZZ_CHECK(L.payload_off <= L.ip_end, "headers end at %u past ip_end %u", L.payload_off,
               L.ip_end);
  }
  if (L.has_ports()) FUZZ_CHECK(L.first_fragment, "ports on a non-first fragment");
  FlowKey k;
  FUZZ_CHECK(extract_flow_key(d, L, k), "ok layout without a flow key");
  FUZZ_CHECK(k.reversed().reversed() == k, "reversed twice differs");
  FUZZ_CHECK(k.symmetric_hash() == k.reversed().symmetric_hash(), "symmetric hash differs");
  (void)verify_checksums(d, L);
}

// DSCP rewrite as NFSlicer marks and restores it: only the six DSCP bits change (and the IPv4
// header checksum, patched incrementally so that a valid one stays valid).
void check_dscp(const Exact& f, const PacketLayout& L, uint8_t dscp) {
  if (!L.ok()) return;
  std::vector<uint8_t> c(f.p.get(), f.p.get() + f.len);
  const uint8_t* ip = f.p.get() + L.l3_off;
  const uint32_t ihl = L.ip_version == 4 ? uint32_t(ip[0] & 0xF) * 4 : 0;
  const bool valid = L.ip_version == 4 && ipv4_header_checksum(ip, ihl) == load_be16(ip + 10);
  park::write_dscp(c.data(), L, dscp);
  FUZZ_CHECK(park::read_dscp(c.data(), L) == (dscp & 0x3F), "DSCP %u written, %u read", dscp & 0x3F,
             park::read_dscp(c.data(), L));
  for (uint32_t i = 0; i < f.len; ++i) {
    const uint32_t o = i - L.l3_off;
    const bool tos =
        i >= L.l3_off && (L.ip_version == 4 ? (o == 1 || o == 10 || o == 11) : (o == 0 || o == 1));
    if (!tos) FUZZ_CHECK(c[i] == f.p[i], "write_dscp changed byte %u", i);
  }
  const uint8_t ecn_before = L.ip_version == 4 ? ip[1] & 3 : (ip[1] >> 4) & 3;
  const uint8_t* nip = c.data() + L.l3_off;
  const uint8_t ecn_after = L.ip_version == 4 ? nip[1] & 3 : (nip[1] >> 4) & 3;
  FUZZ_CHECK(ecn_before == ecn_after, "ECN changed by a DSCP rewrite");
  if (valid)
    FUZZ_CHECK(ipv4_header_checksum(nip, ihl) == load_be16(nip + 10),
               "valid IPv4 header checksum broken by the DSCP patch");
}

void check_frame(const uint8_t* d, size_t n, uint8_t knob) {
  const uint32_t len = uint32_t(std::min<size_t>(n, 1 << 20));
  Exact f(d, len);
  const PacketLayout L = parse_packet(len ? f.p.get() : nullptr, len);
  check_layout(f.p.get(), len, L);
  // The frame may be the first segment of a longer packet (pkt_len >= len).
  const uint32_t pkt_len = len + (knob & 0x7F);
  const park::SliceInfo s = park::inspect_slice(f.p.get(), len, pkt_len, L);
  if (s.mark != park::SliceMark::kPlain) {
    FUZZ_CHECK(s.token_at && s.token_at + park::kTokenBytes <= len, "token at %u of %u", s.token_at,
               len);
  } else {
    FUZZ_CHECK(s.token_at == 0 && s.wire_len == pkt_len, "plain packet with a token");
  }
  check_dscp(f, L, knob);
  reframe::BypassRules rules;
  rules.dscp_mask = uint64_t(knob) * 0x0101010101010101ull;
  (void)reframe::classify(f.p.get(), L, rules);
}


// Reads every record; checks each; returns them (copied) for the comparisons.
struct Rec {
  Nanos ts;
  uint32_t wire_len;
  std::vector<uint8_t> bytes;
};

bool read_all(const std::string& path, size_t file_size, std::vector<Rec>& out, std::string& err) {
  trace::TraceReader r;
  auto& live = memfile_state().live;
  if (!r.open(path)) {
    err = r.error();
    FUZZ_CHECK(err.rfind(path + ": ", 0) == 0, "open error does not name the file: %s",
               err.c_str());
    FUZZ_CHECK(err.find('\n') == std::string::npos, "multi-line error: %s", err.c_str());
    return false;
  }
  FUZZ_CHECK(live.size() == 1 && live[0].len == file_size,
             "the reader no longer maps its file (update mem_file.h)");
  const uint8_t* base = static_cast<const uint8_t*>(live[0].addr);
  trace::PacketRecord rec;
  for (uint64_t k = 0;; ++k) {
    FUZZ_CHECK(k <= file_size / 12 + 1, "more records than the file can hold");
    const trace::ReadStatus st = r.next(rec);
    if (st == trace::ReadStatus::kEnd) break;
    if (st == trace::ReadStatus::kError) {
      err = r.error();
      FUZZ_CHECK(err.rfind(path + ": ", 0) == 0 && err.find('\n') == std::string::npos,
                 "bad read error: %s", err.c_str());
      return false;
    }
    // A record is read in place, unless its link type is not Ethernet: then the reader converts
    // it into its own buffer (link_layer.h; pcapng: per interface, so any pcapng record may be).
    const bool in_file =
        rec.len == 0 || (rec.data >= base && rec.data + rec.len <= base + file_size);
    const bool pcapng = file_size >= 4 && load_be32(base) == 0x0A0D0D0A;
    FUZZ_CHECK(in_file || pcapng || r.link_type() != 1, "record %llu outside the file",
               (unsigned long long)k);
    FUZZ_CHECK(rec.len <= rec.wire_len, "caplen %u > wire length %u", rec.len, rec.wire_len);
    FUZZ_CHECK(r.packets_read() == k + 1, "packets_read %llu after %llu records",
               (unsigned long long)r.packets_read(), (unsigned long long)k + 1);
    out.push_back({rec.ts, rec.wire_len, {rec.data, rec.data + rec.len}});
  }
  return true;
}

void check_capture(const uint8_t* d, size_t n) {
  MemFile file;
  file.set(d, n);
  std::vector<Rec> recs;
  std::string err;
  const bool ok = read_all(file.path(), n, recs, err);
  for (const Rec& r : recs) check_frame(r.bytes.data(), r.bytes.size(), uint8_t(r.wire_len));

  // load_trace() agrees with next().
  trace::Trace t;
  std::string lerr;
  const bool lok = trace::load_trace(file.path(), t, &lerr);
  FUZZ_CHECK(lok == ok, "load_trace %d, reader %d", lok, ok);
  if (!ok) {
    FUZZ_CHECK(lerr == err, "different errors: '%s' / '%s'", lerr.c_str(), err.c_str());
    return;
  }
  FUZZ_CHECK(t.size() == recs.size(), "load_trace %zu records, reader %zu", t.size(), recs.size());

  // Written by PcapWriter (ns precision), read back: same bytes, lengths and timestamps.
  MemFile out("nfpark-fuzz-out");
  trace::PcapWriter w;
  FUZZ_CHECK(w.open(out.path(), trace::Precision::kNano), "%s", w.error().c_str());
  std::vector<const Rec*> kept;
  for (const Rec& r : recs) {
    if (r.ts < 0 || r.ts / kSecond > 0xFFFFFFFFll) continue;  // not representable in pcap
    FUZZ_CHECK(w.write(r.ts, r.bytes.data(), uint32_t(r.bytes.size()), r.wire_len), "%s",
               w.error().c_str());
    kept.push_back(&r);
  }
  FUZZ_CHECK(w.close(), "%s", w.error().c_str());
  const std::vector<uint8_t> written = out.get();
  MemFile again;
  again.set(written.data(), written.size());
  std::vector<Rec> back;
  FUZZ_CHECK(read_all(again.path(), written.size(), back, err), "written pcap unreadable: %s",
             err.c_str());
  FUZZ_CHECK(back.size() == kept.size(), "%zu records written, %zu read", kept.size(), back.size());
  for (size_t i = 0; i < back.size(); ++i) {
    FUZZ_CHECK(back[i].bytes == kept[i]->bytes, "record %zu bytes differ after a round trip", i);
    FUZZ_CHECK(back[i].ts == kept[i]->ts, "record %zu: ts %lld written, %lld read", i,
               (long long)kept[i]->ts, (long long)back[i].ts);
    FUZZ_CHECK(back[i].wire_len == kept[i]->wire_len, "record %zu: wire length %u -> %u", i,
               kept[i]->wire_len, back[i].wire_len);
  }
}

}  // namespace
}  // namespace nfpark::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] & 1) {
    nfpark::fuzz::check_frame(data + 1, size - 1, data[0]);
    return 0;
  }
  nfpark::fuzz::check_capture(data + 1, size - 1);
  return 0;
}
