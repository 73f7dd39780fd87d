// LinkLayer: turns a captured record of another pcap link type into an Ethernet frame, so that
// every nfpark parser (which starts at L2) reads captures taken on hosts.
//
// Link types (pcap LINKTYPE_ / DLT_ numbers) and what is synthesised:
//   1    ETHERNET            kept as it is (no copy).
//   113  LINUX_SLL           `tcpdump -i any` (cooked v1, 16-byte header). EtherType = the SLL
//                            protocol field; source MAC = the SLL address when it is 6 bytes long.
//   276  LINUX_SLL2          cooked v2 (20-byte header), as SLL.
//   0    NULL                BSD loopback: 4-byte address family in the capturing host's byte
//                            order (2 = IPv4; 24, 28, 30 = IPv6 on Net/Open BSD, FreeBSD, macOS).
//   108  LOOP                OpenBSD loopback: the same family, in network byte order.
//   101  RAW, 12/14 DLT_RAW  raw IP: the version nibble of the first byte says IPv4 or IPv6.
//   228  IPV4, 229 IPV6      raw IP of that version.
// Synthesised Ethernet header: destination 02:00:00:00:00:02, source 02:00:00:00:00:01 (SLL: the
// captured address when it is a MAC), EtherType as above. An SLL protocol below 0x0600 (802.2
// LLC frames, Novell 802.3) becomes an 802.3 length field, so the frame stays a valid 802.3 one.
// Lengths: the link header is replaced by 14 bytes, so the captured and the wire length both
// change by 14 - (link header length); a converted frame longer than kMaxFrame is cut there (the
// rest counts as not captured).
// Errors (one line, naming the packet and the fix): a record shorter than its link header, a
// loopback family or raw-IP version that is neither IPv4 nor IPv6.
// Any other link type is refused by link_supported(); link_refusal() says why and what to do.
#pragma once
#include <cstdint>
#include <string>

namespace nfpark::trace {

namespace linktype {
constexpr uint32_t kNull = 0, kEthernet = 1, kDltRaw12 = 12, kDltRaw14 = 14, kRaw = 101,
                   kLoop = 108, kSll = 113, kIpv4 = 228, kIpv6 = 229, kSll2 = 276;
}  // namespace linktype

constexpr uint32_t kMaxFrame = 256 * 1024;  // the largest frame nfpark reads or writes (snaplen)

// Name of a link type, e.g. "LINUX_SLL (113)".
std::string link_name(uint32_t link);
bool link_supported(uint32_t link);
// For an unsupported link type: what it is and how to make the file usable.
std::string link_refusal(uint32_t link);

// Converts one record of `link` to Ethernet into `out` (room for kMaxFrame bytes). On success
// sets `len` (captured) and `wire_len` and returns ""; otherwise returns why not.
std::string to_ethernet(uint32_t link, const uint8_t* in, uint32_t caplen, uint32_t orig_len,
                        uint8_t* out, uint32_t& len, uint32_t& wire_len);

}  // namespace nfpark::trace
