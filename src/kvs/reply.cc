#include "kvs/reply.h"

#include <algorithm>

#include "core/bytes.h"

namespace nfpark::kvs {

void ResponseWindow::start() {
  resps_.push_back(Resp{uint32_t(pieces_.size()), 0, 0, false});
}

void ResponseWindow::add_piece(const Piece& p) {
  if (resps_.empty()) start();
  pieces_.push_back(p);
  resps_.back().pieces++;
  resps_.back().bytes += p.len;
}

void ResponseWindow::text(std::string_view s) {
  if (s.empty()) return;
  if (resps_.empty()) start();
  Resp& r = resps_.back();
  const auto off = uint32_t(text_.size());
  text_.insert(text_.end(), s.begin(), s.end());
  if (r.pieces > 0) {
    Piece& last = pieces_.back();
    if (last.kind == Slice::kText && last.text_off + last.len == off) {  // contiguous: extend
      last.len += uint32_t(s.size());
      r.bytes += uint32_t(s.size());
      return;
    }
  }
  add_piece(Piece{Slice::kText, off, nullptr, uint32_t(s.size()), 0, {}});
}

void ResponseWindow::value(const uint8_t* data, uint32_t len) {
  add_piece(Piece{Slice::kValue, 0, data, len, len, {}});
}

void ResponseWindow::hot(const uint8_t* data, uint32_t len, uint32_t room, HotRef ref) {
  add_piece(Piece{Slice::kHot, 0, data, len, room, ref});
}

void ResponseWindow::end_marker() {
  if (resps_.empty()) start();
  Resp& r = resps_.back();
  if (r.pieces > 0) {
    Piece& last = pieces_.back();
    // A hot buffer holds "END\r\n" right after the value's "\r\n": send it from there.
    if (last.kind == Slice::kHot && last.room >= last.len + 5) {
      last.len += 5;
      r.bytes += 5;
      return;
    }
  }
  text("END\r\n");
}

void ResponseWindow::reset_current() {
  if (resps_.empty()) return;
  Resp& r = resps_.back();
  for (uint32_t i = r.first_piece; i < r.first_piece + r.pieces; ++i)
    if (pieces_[i].kind == Slice::kHot && releaser_) releaser_->release(pieces_[i].ref);
  pieces_.resize(r.first_piece);
  r.pieces = 0;
  r.bytes = 0;
  r.skip = false;
}

void ResponseWindow::out_string(std::string_view s, bool noreply) {
  if (resps_.empty()) start();
  reset_current();
  if (noreply) {
    resps_.back().skip = true;
    return;
  }
  text(s);
  text("\r\n");
}

void ResponseWindow::cull() {
  for (const Piece& p : pieces_)
    if (p.kind == Slice::kHot && releaser_) releaser_->release(p.ref);
  resps_.clear();
  pieces_.clear();
  text_.clear();
}

void ResponseWindow::emit(const Resp& r, uint16_t request_id, DatagramSink& sink) {
  uint8_t frame[kUdpFrameHeader] = {};
  store_be16(frame, request_id);
  uint32_t total = r.bytes / kUdpData + (r.bytes % kUdpData ? 1 : 0);
  store_be16(frame + 4, uint16_t(std::min<uint32_t>(total, 0xFFFF)));
  if (r.bytes == 0) {
    sink.datagram(frame, nullptr, 0, 0);  // memcached sends a lone header (total 0)
    return;
  }
  uint32_t pi = r.first_piece, po = 0, sent = 0;
  for (uint32_t seq = 0; sent < r.bytes; ++seq) {
    const uint32_t chunk = std::min(kUdpData, r.bytes - sent);
    slices_.clear();
    for (uint32_t need = chunk; need > 0;) {
      const Piece& p = pieces_[pi];
      const uint32_t take = std::min(p.len - po, need);
      if (take > 0) {
        const uint8_t* base = p.kind == Slice::kText ? text_.data() + p.text_off : p.data;
        slices_.push_back(Slice{p.kind, base + po, take, p.ref});
      }
      po += take;
      need -= take;
      if (po == p.len) {
        ++pi;
        po = 0;
      }
    }
    store_be16(frame + 2, uint16_t(seq));
    sink.datagram(frame, slices_.data(), uint32_t(slices_.size()), chunk);
    sent += chunk;
  }
  for (uint32_t i = r.first_piece; i < r.first_piece + r.pieces; ++i)
    if (pieces_[i].kind == Slice::kHot) sink.take_ref(pieces_[i].ref);
}

void ResponseWindow::flush(uint16_t request_id, DatagramSink& sink) {
  bool head = true;  // the next response is the first one transmit_udp would look at
  for (const Resp& r : resps_) {
    if (r.skip) continue;  // finished without a datagram; the head stays where it was
    if (r.bytes == 0 && !head) continue;
    emit(r, request_id, sink);
    head = false;
  }
  resps_.clear();
  pieces_.clear();
  text_.clear();
}

}  // namespace nfpark::kvs
