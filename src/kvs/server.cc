#include "kvs/server.h"

#include "core/bytes.h"

namespace nfpark::kvs {

std::string ServerConfig::check() const {
  const uint64_t need = 2 * ItemStore::record_size(250, protocol.max_value + 2);
  if (cache.log_bytes < need)
    return "--log-mb: the item log must hold two of the largest items (" +
           std::to_string((need + (1 << 20) - 1) >> 20) + " MiB for --max-value " +
           std::to_string(protocol.max_value) + ")";
  if (protocol.max_value > (64u << 20)) return "--max-value: at most 67108864 bytes";
  if (assembly_max_datagrams > 65535) return "assembly: at most 65535 datagrams";
  return "";
}

Server::Server(const ServerConfig& cfg, uint8_t* region, uint64_t region_bytes)
    : cache_(cfg.cache, region, region_bytes),
      protocol_(cache_, cfg.protocol),
      assembler_(cfg.assembly_contexts, cfg.max_request(), cfg.assembly_max_datagrams,
                 cfg.assembly_timeout) {}

void Server::datagram(uint8_t* p, uint32_t len, uint64_t client, Nanos now, bool zero_copy,
                      DatagramSink& sink) {
  ++c_.datagrams;
  if (len <= kUdpFrameHeader) {  // memcached ignores these
    ++c_.short_datagrams;
    return;
  }
  const uint16_t id = load_be16(p), seq = load_be16(p + 2), total = load_be16(p + 4);
  if (total == 0) {
    ++c_.bad_frames;
    return;
  }
  if (total == 1) {  // the sequence number and reserved bytes are ignored, as in memcached
    protocol_.run(reinterpret_cast<char*>(p + kUdpFrameHeader), len - kUdpFrameHeader, id, now,
                  zero_copy, sink);
    return;
  }
  ++c_.multi_datagram;
  const FrameAssembler::Request r =
      assembler_.add(client, id, seq, total, p + kUdpFrameHeader, len - kUdpFrameHeader, now);
  if (r.data) protocol_.run(r.data, r.len, id, now, zero_copy, sink);
}

uint64_t Server::malformed() const {
  const AssemblerCounters& a = assembler_.counters();
  return protocol_.counters().malformed() + c_.short_datagrams + c_.bad_frames +
         a.dropped_too_large + a.dropped_inconsistent;
}

void Server::counters(const CounterSink& s) const {
  const ProtocolCounters& p = protocol_.counters();
  const CacheCounters& c = cache_.counters();
  const HotCounters& h = cache_.hot().counters();
  const StoreCounters& st = cache_.store().counters();
  const AssemblerCounters& a = assembler_.counters();
  s("datagrams", c_.datagrams);
  s("requests", p.requests);
  s("commands", p.commands);
  s("malformed", malformed());
  s("errors", p.errors);
  s("client_errors", p.client_errors);
  s("server_errors", p.server_errors);
  s("ignored", p.ignored);
  s("short_datagrams", c_.short_datagrams);
  s("bad_frames", c_.bad_frames);
  s("gets", c.get_keys);
  s("hits", c.get_hits);
  s("misses", c.get_misses);
  s("expired", c.get_expired);
  s("hot_hits", c.hot_hits);
  s("stores", c.stores);
  s("stored", c.stored);
  s("not_stored", c.not_stored);
  s("exists", c.exists);
  s("not_found", c.not_found);
  s("deletes", c.deletes);
  s("deleted", c.deleted);
  s("items", cache_.store().items());
  s("log_bytes_live", cache_.store().live_bytes());
  s("evictions", st.evictions);
  s("index_evictions", st.index_evictions);
  s("reinserts", st.reinserts);
  s("hot_items", cache_.hot().live());
  s("hot_bytes", cache_.hot().region().used());
  s("hot_promotions", h.promotions);
  s("hot_demotions", h.demotions);
  s("stable_hits", h.stable_hits);
  s("stable_to_pending", h.invalidations);
  s("pending_to_stable", h.swaps);
  s("pending_copies", h.pending_copies);
  s("refresh_failed", h.refresh_failed);
  s("refs_in_flight", cache_.hot().refs_in_flight());
  s("stale_releases", h.stale_releases);
  s("multi_datagram", c_.multi_datagram);
  s("assembled", a.assembled);
  s("assembly_dropped",
    a.dropped_timeout + a.dropped_full + a.dropped_too_large + a.dropped_inconsistent);
}

}  // namespace nfpark::kvs
