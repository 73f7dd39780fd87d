#include "park/host_boundary.h"

namespace nfpark::park {

std::optional<HostMode> parse_host_mode(std::string_view s) {
  if (s == "host") return HostMode::kHost;
  if (s == "split") return HostMode::kSplit;
  if (s == "nicmem") return HostMode::kNicmem;
  if (s == "nfslicer") return HostMode::kNfslicer;
  return std::nullopt;
}

std::string_view to_string(HostMode m) {
  switch (m) {
    case HostMode::kHost:
      return "host";
    case HostMode::kSplit:
      return "split";
    case HostMode::kNicmem:
      return "nicmem";
    case HostMode::kNfslicer:
      return "nfslicer";
  }
  return "?";
}

void HostBoundary::rx_nicmem(uint32_t hdr, uint32_t data, bool data_in_nicmem) {
  if (data && !data_in_nicmem) ++nicmem_fallbacks_;  // secondary (host-memory) buffer used
  add_rx(hdr + data, data_in_nicmem ? hdr : hdr + data, 2);
}

void HostBoundary::tx_nicmem(uint32_t hdr, uint32_t data, bool data_in_nicmem) {
  add_tx(hdr + data, data_in_nicmem ? hdr : hdr + data, data ? 2 : 1);
}

void HostBoundary::report(const CounterSink& s) const {
  auto dir = [&](const char* p, const BoundaryDir& d) {
    const std::string n(p);
    s(n + "_packets", d.packets);
    s(n + "_wire_bytes", d.wire_bytes);
    s(n + "_data_bytes", d.data_bytes);
    s(n + "_descriptors", d.descriptors);
    s(n + "_desc_bytes", d.descriptors * desc_bytes_);
    s(n + "_kept_bytes", d.kept_bytes);
  };
  dir("rx", rx_);
  dir("tx", tx_);
  s("nf_packets", nf_packets_);
  s("nf_touched_bytes", nf_touched_);
  s("nicmem_fallbacks", nicmem_fallbacks_);
}

void HostBoundary::merge_from(const HostBoundary& o) {
  auto sum = [](BoundaryDir& a, const BoundaryDir& b) {
    a.packets += b.packets;
    a.wire_bytes += b.wire_bytes;
    a.data_bytes += b.data_bytes;
    a.descriptors += b.descriptors;
    a.kept_bytes += b.kept_bytes;
  };
  sum(rx_, o.rx_);
  sum(tx_, o.tx_);
  nicmem_fallbacks_ += o.nicmem_fallbacks_;
  nf_packets_ += o.nf_packets_;
  nf_touched_ += o.nf_touched_;
}

}  // namespace nfpark::park
