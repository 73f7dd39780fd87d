// TraceReader: streams packets out of a classic pcap or a pcapng file, zero-copy.
//
// Formats: classic pcap with microsecond (0xa1b2c3d4) or nanosecond (0xa1b23c4d) magic, in
// either byte order; pcapng (SHB, IDB with if_tsresol/if_tsoffset, EPB, SPB, the obsolete PB;
// unknown blocks are skipped; several sections allowed). Every nfpark parser starts at Ethernet:
// records of other link types (Linux cooked SLL/SLL2, BSD loopback, raw IP; see link_layer.h)
// are converted to Ethernet frames on read; any other link type is refused at open (pcapng: at
// its interface block) with an error naming the file, the link type and the fix.
//
// The file is memory-mapped; an Ethernet PacketRecord's `data` points into the mapping and stays
// valid until the reader is closed or destroyed. A converted record is built in the reader's own
// buffer and stays valid until the next call of next(). Errors name the file and what is wrong:
//   "x.pcap: not a pcap/pcapng file (magic 0x12345678)"
//   "x.pcap: packet 12 truncated (record says 1514 bytes, 200 left in the file)"
// Packets are numbered from 1, as tshark does.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "trace/trace.h"

namespace nfpark::trace {

enum class TraceFormat : uint8_t { kPcapMicro, kPcapNano, kPcapng };
const char* to_string(TraceFormat f);

struct PacketRecord {
  Nanos ts = 0;                   // ns since the Unix epoch
  const uint8_t* data = nullptr;  // captured bytes (Ethernet frame)
  uint32_t len = 0;               // captured length
  uint32_t wire_len = 0;          // original length
};

enum class ReadStatus : uint8_t { kPacket, kEnd, kError };

class TraceReader {
 public:
  TraceReader() = default;
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  ~TraceReader() { close(); }

  bool open(const std::string& path);  // false: see error()
  ReadStatus next(PacketRecord& rec);
  void close();

  const std::string& error() const { return error_; }
  TraceFormat format() const { return format_; }
  uint64_t packets_read() const { return count_; }
  uint64_t file_bytes() const { return size_; }
  // The link type of the file (classic pcap) or of the last interface seen (pcapng).
  uint32_t link_type() const { return link_; }

 private:
  ReadStatus next_pcap(PacketRecord& rec);
  ReadStatus next_pcapng(PacketRecord& rec);
  bool read_shb(uint64_t at);
  bool read_idb(const uint8_t* body, uint32_t body_len);
  ReadStatus fail(const std::string& what);
  // Converts rec (of link type `link`) to Ethernet in conv_ when it is another link type.
  ReadStatus convert(uint32_t link, PacketRecord& rec);
  uint16_t u16(const uint8_t* p) const;
  uint32_t u32(const uint8_t* p) const;

  std::string path_, error_;
  const uint8_t* map_ = nullptr;
  uint64_t size_ = 0, pos_ = 0, count_ = 0;
  TraceFormat format_ = TraceFormat::kPcapMicro;
  bool swap_ = false;
  uint32_t link_ = 1;          // classic pcap: the file's link type
  std::vector<uint8_t> conv_;  // a converted record (allocated at the first one)
  // pcapng interfaces of the current section: ticks per second (as 10^e or 2^e) and offset.
  struct Iface {
    bool pow2 = false;
    uint8_t exp = 6;
    int64_t offset_s = 0;
    uint32_t snaplen = 0;
    uint32_t link = 1;
  };
  static constexpr int kMaxIfaces = 64;
  Iface ifaces_[kMaxIfaces];
  int n_ifaces_ = 0;
  // False when the time (with the interface's if_tsoffset) does not fit int64 nanoseconds.
  bool ticks_to_ns(const Iface& i, uint64_t ticks, Nanos& out) const;
};

// Reads a whole file into `out` (appending). Returns false with `*error` set on failure.
bool load_trace(const std::string& path, Trace& out, std::string* error);

}  // namespace nfpark::trace
