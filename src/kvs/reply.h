// Replies: memcached's response objects (mc_resp) and its UDP transmit rules, reproduced exactly.
//
// A command's reply is one or more responses; a response is a byte stream of pieces: text
// (status lines, "VALUE ..." headers), a value copied from the item log, or a hot value that may
// be sent zero-copy from its stable buffer (it carries a HotRef). Responses collect in a
// ResponseWindow until memcached would write them out (a flush: after a get, after every 21
// commands, at the end of a datagram); a malformed get or an HTTP line culls the unsent ones.
//
// Datagrams (memcached 1.6 transmit_udp): each response is cut into datagrams of at most
// kUdpData = 1392 stream bytes behind the 8-byte frame header (request id, sequence, total,
// 0); responses never share a datagram. Within one flush, the first response that is not
// `skip` (noreply) is sent even when empty — as a lone 8-byte header with total 0 — but empty
// responses after a sent one are dropped silently, like skipped ones.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "kvs/hot_ref.h"

namespace nfpark::kvs {

constexpr uint32_t kUdpFrameHeader = 8;
constexpr uint32_t kUdpMaxPayload = 1400;  // memcached's UDP_MAX_PAYLOAD_SIZE (with the header)
constexpr uint32_t kUdpData = kUdpMaxPayload - kUdpFrameHeader;

// One contiguous run of a datagram's stream bytes.
struct Slice {
  enum Kind : uint8_t { kText, kValue, kHot };
  Kind kind = kText;
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  HotRef ref;  // kHot only
};

// Where datagrams go (the engine builds packets; tests collect bytes).
class DatagramSink {
 public:
  virtual ~DatagramSink() = default;
  // One reply datagram: its frame header and the stream bytes it carries, in order.
  virtual void datagram(const uint8_t (&frame)[kUdpFrameHeader], const Slice* slices, uint32_t n,
                        uint32_t bytes) = 0;
  // After the last datagram of a response that carried `ref`: the sink now owns that reference
  // and returns it to the hot set once nothing it built points at the stable buffer any more.
  virtual void take_ref(HotRef ref) = 0;
};

// Who takes back references of responses that are never sent (culled or reset).
class RefReleaser {
 public:
  virtual ~RefReleaser() = default;
  virtual void release(HotRef ref) = 0;
};

class ResponseWindow {
 public:
  explicit ResponseWindow(RefReleaser* releaser = nullptr) : releaser_(releaser) {}
  ~ResponseWindow() { cull(); }
  ResponseWindow(const ResponseWindow&) = delete;
  ResponseWindow& operator=(const ResponseWindow&) = delete;

  void start();                                   // resp_start: a new, empty response
  void text(std::string_view s);                  // appends text to the current response
  void value(const uint8_t* data, uint32_t len);  // appends a value copied at emission
  // Appends a hot value: `len` bytes sent, `room` bytes readable at `data` (>= len).
  void hot(const uint8_t* data, uint32_t len, uint32_t room, HotRef ref);
  // Appends "END\r\n"; a trailing hot piece whose buffer holds those bytes is extended instead.
  void end_marker();
  // memcached's out_string: the current response becomes `s`, or is skipped under noreply.
  void out_string(std::string_view s, bool noreply);
  void cull();  // drops every unsent response
  // Emits every response (rules above) with `request_id`, then empties the window.
  void flush(uint16_t request_id, DatagramSink& sink);

  bool empty() const { return resps_.empty(); }
  size_t size() const { return resps_.size(); }

 private:
  struct Piece {
    Slice::Kind kind;
    uint32_t text_off;  // kText: offset into text_
    const uint8_t* data;
    uint32_t len, room;
    HotRef ref;
  };
  struct Resp {
    uint32_t first_piece = 0, pieces = 0, bytes = 0;
    bool skip = false;
  };
  void add_piece(const Piece& p);
  void reset_current();
  void emit(const Resp& r, uint16_t request_id, DatagramSink& sink);

  RefReleaser* releaser_;
  std::vector<Resp> resps_;
  std::vector<Piece> pieces_;
  std::vector<uint8_t> text_;
  std::vector<Slice> slices_;  // scratch for one datagram
};

}  // namespace nfpark::kvs
