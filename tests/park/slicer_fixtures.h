// Packets shared by the Slicer tests: an IPv4/UDP frame of a given size, DSCP and packet id.
#pragma once
#include <cstdint>
#include <vector>

#include "core/packet_builder.h"

namespace nfpark::park::testing {

inline std::vector<uint8_t> udp4(uint32_t frame, uint64_t id, uint8_t dscp = 0) {
  return PacketBuilder()
      .ipv4("10.0.0.1", "10.0.0.2")
      .udp(1000, 2000)
      .dscp(dscp)
      .frame_size(frame)
      .packet_id(id)
      .build();
}

}  // namespace nfpark::park::testing
