#include "kvs/frame_assembler.h"

#include <cstring>

namespace nfpark::kvs {

FrameAssembler::FrameAssembler(uint32_t contexts, uint32_t max_bytes, uint32_t max_datagrams,
                               Nanos timeout)
    : max_bytes_(max_bytes), max_datagrams_(max_datagrams), timeout_(timeout), ctx_(contexts) {
  for (Ctx& c : ctx_) {
    c.have.assign(max_datagrams, 0);
    c.off.assign(max_datagrams, 0);
    c.len.assign(max_datagrams, 0);
    c.buf.reset(new char[max_bytes]);
  }
  out_.reset(new char[max_bytes]);
}

uint32_t FrameAssembler::pending() const {
  uint32_t n = 0;
  for (const Ctx& c : ctx_) n += c.used;
  return n;
}

void FrameAssembler::expire(Nanos now) {
  for (Ctx& c : ctx_) {
    if (c.used && now - c.last > timeout_) {
      c.used = false;
      ++c_.dropped_timeout;
    }
  }
}

FrameAssembler::Request FrameAssembler::add(uint64_t client, uint16_t id, uint16_t seq,
                                            uint16_t total, const uint8_t* data, uint32_t len,
                                            Nanos now) {
  expire(now);
  if (ctx_.empty()) return {};
  Ctx* ctx = nullptr;
  for (Ctx& c : ctx_)
    if (c.used && c.client == client && c.id == id) ctx = &c;
  if (!ctx) {
    if (total > max_datagrams_) {
      ++c_.dropped_too_large;
      return {};
    }
    Ctx* oldest = &ctx_[0];
    for (Ctx& c : ctx_) {
      if (!c.used) {
        oldest = &c;
        break;
      }
      if (c.last < oldest->last) oldest = &c;
    }
    if (oldest->used) ++c_.dropped_full;
    ctx = oldest;
    ctx->used = true;
    ctx->client = client;
    ctx->id = id;
    ctx->total = total;
    ctx->got = 0;
    ctx->bytes = 0;
    std::memset(ctx->have.data(), 0, total);
  }
  ctx->last = now;
  if (total != ctx->total || seq >= total) {
    ++c_.dropped_inconsistent;
    ctx->used = false;
    return {};
  }
  if (ctx->have[seq]) {
    ++c_.duplicates;
    return {};
  }
  if (uint64_t(ctx->bytes) + len > max_bytes_) {
    ++c_.dropped_too_large;
    ctx->used = false;
    return {};
  }
  std::memcpy(ctx->buf.get() + ctx->bytes, data, len);
  ctx->have[seq] = 1;
  ctx->off[seq] = ctx->bytes;
  ctx->len[seq] = len;
  ctx->bytes += len;
  if (++ctx->got < ctx->total) return {};
  uint32_t n = 0;  // in sequence order, whatever order the datagrams came in
  for (uint16_t s = 0; s < ctx->total; ++s) {
    std::memcpy(out_.get() + n, ctx->buf.get() + ctx->off[s], ctx->len[s]);
    n += ctx->len[s];
  }
  ctx->used = false;
  ++c_.assembled;
  return {out_.get(), n};
}

}  // namespace nfpark::kvs
