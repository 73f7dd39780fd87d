#include "trace/link_layer.h"

#include <cstring>

#include "core/bytes.h"

namespace nfpark::trace {

namespace {

constexpr uint8_t kDst[6] = {0x02, 0, 0, 0, 0, 0x02}, kSrc[6] = {0x02, 0, 0, 0, 0, 0x01};

// Bytes of link header a record of `link` starts with.
uint32_t header_len(uint32_t link) {
  switch (link) {
    case linktype::kSll:
      return 16;
    case linktype::kSll2:
      return 20;
    case linktype::kNull:
    case linktype::kLoop:
      return 4;
    default:
      return 0;
  }
}

uint16_t ethertype_of_version(uint8_t first) {
  switch (first >> 4) {
    case 4:
      return 0x0800;
    case 6:
      return 0x86DD;
    default:
      return 0;
  }
}

// A BSD address family as an EtherType, 0 when it is neither IPv4 nor IPv6.
uint16_t ethertype_of_family(uint32_t af) {
  if (af == 2) return 0x0800;
  if (af == 24 || af == 28 || af == 30) return 0x86DD;
  return 0;
}

}  // namespace

std::string link_name(uint32_t link) {
  const char* n = "unknown";
  switch (link) {
    case linktype::kNull:
      n = "NULL (BSD loopback)";
      break;
    case linktype::kEthernet:
      n = "ETHERNET";
      break;
    case linktype::kDltRaw12:
    case linktype::kDltRaw14:
    case linktype::kRaw:
      n = "RAW (IP)";
      break;
    case linktype::kLoop:
      n = "LOOP (OpenBSD loopback)";
      break;
    case linktype::kSll:
      n = "LINUX_SLL (cooked, tcpdump -i any)";
      break;
    case linktype::kSll2:
      n = "LINUX_SLL2 (cooked v2, tcpdump -i any)";
      break;
    case linktype::kIpv4:
      n = "IPV4";
      break;
    case linktype::kIpv6:
      n = "IPV6";
      break;
    case 105:
      n = "IEEE802_11 (Wi-Fi)";
      break;
    case 127:
      n = "IEEE802_11_RADIOTAP (Wi-Fi)";
      break;
    case 9:
      n = "PPP";
      break;
    case 50:
      n = "PPP_HDLC";
      break;
    case 104:
      n = "C_HDLC";
      break;
  }
  return std::string(n) + " (" + std::to_string(link) + ")";
}

bool link_supported(uint32_t link) {
  return link == linktype::kEthernet || header_len(link) > 0 || link == linktype::kRaw ||
         link == linktype::kDltRaw12 || link == linktype::kDltRaw14 || link == linktype::kIpv4 ||
         link == linktype::kIpv6;
}

std::string link_refusal(uint32_t link) {
  return "link type " + link_name(link) +
         " is not supported: nfpark reads Ethernet, Linux cooked (SLL, SLL2), BSD loopback "
         "(NULL, LOOP) and raw IP captures; capture on an Ethernet interface, or convert the "
         "file first (e.g. tcprewrite --dlt=enet)";
}

std::string to_ethernet(uint32_t link, const uint8_t* in, uint32_t caplen, uint32_t orig_len,
                        uint8_t* out, uint32_t& len, uint32_t& wire_len) {
  const uint32_t hl = header_len(link);
  if (caplen < hl)
    return "record shorter than its " + link_name(link) + " header (" + std::to_string(caplen) +
           " of " + std::to_string(hl) + " bytes)";
  const uint8_t* l3 = in + hl;
  const uint32_t l3_len = caplen - hl;
  uint16_t type = 0;
  std::memcpy(out, kDst, 6);
  std::memcpy(out + 6, kSrc, 6);
  switch (link) {
    case linktype::kSll:
    case linktype::kSll2: {
      const bool v2 = link == linktype::kSll2;
      type = load_be16(in + (v2 ? 0 : 14));
      const uint8_t* addr = in + (v2 ? 12 : 6);
      const uint16_t alen = v2 ? in[11] : load_be16(in + 4);
      if (alen == 6) std::memcpy(out + 6, addr, 6);
      if (type < 0x0600) type = uint16_t(l3_len < 1500 ? l3_len : 1500);  // 802.3 length
      break;
    }
    case linktype::kNull:
    case linktype::kLoop: {
      uint32_t af = load_be32(in);
      if (link == linktype::kNull && (af & 0xFFFF0000u)) af = __builtin_bswap32(af);
      type = ethertype_of_family(af);
      if (!type)
        return "BSD loopback address family " + std::to_string(af) +
               " is neither IPv4 nor IPv6 (keep only IP: tcpdump -r IN -w OUT 'ip or ip6')";
      break;
    }
    default: {  // raw IP
      if (!l3_len) return "empty raw IP record";
      type = link == linktype::kIpv4   ? 0x0800
             : link == linktype::kIpv6 ? 0x86DD
                                       : ethertype_of_version(l3[0]);
      if (!type)
        return "raw IP record of IP version " + std::to_string(l3[0] >> 4) +
               " (neither 4 nor 6: keep only IP with tcpdump -r IN -w OUT 'ip or ip6')";
    }
  }
  store_be16(out + 12, type);
  const uint32_t take = l3_len < kMaxFrame - 14 ? l3_len : kMaxFrame - 14;
  std::memcpy(out + 14, l3, take);
  len = 14 + take;
  const uint64_t orig = orig_len > caplen ? orig_len : caplen;
  const uint64_t wire = orig - hl + 14;  // raw IP and BSD loopback grow by up to 14 bytes
  wire_len = wire > UINT32_MAX ? UINT32_MAX : uint32_t(wire);
  return "";
}

}  // namespace nfpark::trace
