#include "kvs/ipv4_reassembler.h"

#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"

namespace nfpark::kvs {

namespace {
constexpr uint32_t kHdrRoom = 60;
}

Ipv4Reassembler::Ipv4Reassembler(uint32_t contexts, Nanos timeout)
    : timeout_(timeout), ctx_(contexts) {
  for (Ctx& c : ctx_) {
    c.units.assign((kMaxPayload / 8 + 64) / 64, 0);
    c.buf.resize(kHdrRoom + kMaxPayload + 8);
  }
}

uint32_t Ipv4Reassembler::pending() const {
  uint32_t n = 0;
  for (const Ctx& c : ctx_) n += c.used;
  return n;
}

Ipv4Reassembler::Packet Ipv4Reassembler::add(const uint8_t* ip, uint32_t len, Nanos now) {
  ++c_.fragments;
  for (Ctx& c : ctx_) {
    if (c.used && now - c.last > timeout_) {
      drop(c);
      ++c_.dropped_timeout;
    }
  }
  if (ctx_.empty()) return {};
  const uint32_t hlen = uint32_t(ip[0] & 0x0F) * 4;
  const uint32_t src = load_be32(ip + 12), dst = load_be32(ip + 16);
  const uint16_t id = load_be16(ip + 4), frag = load_be16(ip + 6);
  const bool more = frag & 0x2000;
  const uint32_t off = uint32_t(frag & 0x1FFF) * 8, plen = len - hlen;
  Ctx* ctx = nullptr;
  for (Ctx& c : ctx_)
    if (c.used && c.src == src && c.dst == dst && c.id == id && c.proto == ip[9]) ctx = &c;
  if (!ctx) {
    ctx = &ctx_[0];
    for (Ctx& c : ctx_) {
      if (!c.used) {
        ctx = &c;
        break;
      }
      if (c.last < ctx->last) ctx = &c;
    }
    if (ctx->used) ++c_.dropped_full;
    ctx->used = true;
    ctx->have_first = ctx->have_last = false;
    ctx->src = src;
    ctx->dst = dst;
    ctx->id = id;
    ctx->proto = ip[9];
    ctx->total = ctx->got = 0;
    std::memset(ctx->units.data(), 0, ctx->units.size() * 8);
  }
  ctx->last = now;
  if ((more && plen % 8 != 0) || off + plen > kMaxPayload || plen == 0 ||
      (ctx->have_last && off + plen > ctx->total) || (!more && off + plen < ctx->got)) {
    drop(*ctx);
    ++c_.dropped_bad;
    return {};
  }
  const uint32_t u0 = off / 8, u1 = (off + plen + 7) / 8;
  for (uint32_t u = u0; u < u1; ++u) {
    if (ctx->units[u / 64] >> (u % 64) & 1) {
      drop(*ctx);
      ++c_.dropped_overlap;
      return {};
    }
  }
  for (uint32_t u = u0; u < u1; ++u) ctx->units[u / 64] |= uint64_t(1) << (u % 64);
  std::memcpy(ctx->buf.data() + kHdrRoom + off, ip + hlen, plen);
  ctx->got += plen;
  if (off == 0) {
    ctx->have_first = true;
    ctx->hlen = uint8_t(hlen);
    std::memcpy(ctx->buf.data() + kHdrRoom - hlen, ip, hlen);
  }
  if (!more) {
    ctx->have_last = true;
    ctx->total = off + plen;
  }
  if (!ctx->have_first || !ctx->have_last || ctx->got != ctx->total) return {};
  uint8_t* h = ctx->buf.data() + kHdrRoom - ctx->hlen;
  const uint32_t total = ctx->hlen + ctx->total;
  store_be16(h + 2, uint16_t(total));
  store_be16(h + 6, 0);  // no longer a fragment
  store_be16(h + 10, 0);
  store_be16(h + 10, ipv4_header_checksum(h, ctx->hlen));
  drop(*ctx);
  ++c_.reassembled;
  return {h, total};
}

}  // namespace nfpark::kvs
