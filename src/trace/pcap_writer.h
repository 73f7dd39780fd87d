// PcapWriter: writes a classic pcap file (Ethernet link type, host byte order, snaplen 262144)
// with microsecond (magic 0xa1b2c3d4) or nanosecond (0xa1b23c4d) timestamps, through one large
// stdio buffer. Readable by tshark/Wireshark, tcpdump and libpcap >= 1.5 (nanosecond files).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/time.h"
#include "trace/trace.h"

namespace nfpark::trace {

enum class Precision : uint8_t { kMicro, kNano };

class PcapWriter {
 public:
  PcapWriter() = default;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter() { close(); }

  bool open(const std::string& path, Precision p = Precision::kNano);  // false: see error()
  // `ts` in ns since the epoch; negative times are written as 0. `wire_len` below `len` is
  // written as `len`.
  bool write(Nanos ts, const uint8_t* data, uint32_t len, uint32_t wire_len);
  // The same in pieces, for frames held in several buffers (mbuf segments): a record header for
  // `len` captured bytes, then append() until exactly `len` bytes were given.
  bool begin(Nanos ts, uint32_t len, uint32_t wire_len);
  bool append(const uint8_t* data, uint32_t n);
  bool close();  // flushes; false if any write failed
  const std::string& error() const { return error_; }
  uint64_t packets_written() const { return count_; }

 private:
  std::FILE* f_ = nullptr;
  std::string path_, error_;
  Precision prec_ = Precision::kNano;
  uint64_t count_ = 0;
  char* buf_ = nullptr;
};

// Writes a whole Trace. Returns false with `*error` set on failure.
bool save_trace(const std::string& path, const Trace& t, Precision p, std::string* error);

}  // namespace nfpark::trace
