#include "trace/pcap_writer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nfpark::trace {

namespace {
constexpr size_t kBuffer = 4 << 20;
struct FileHeader {
  uint32_t magic;
  uint16_t major, minor;
  int32_t thiszone;
  uint32_t sigfigs, snaplen, linktype;
};
struct RecordHeader {
  uint32_t sec, frac, incl, orig;
};
static_assert(sizeof(FileHeader) == 24 && sizeof(RecordHeader) == 16);
}  // namespace

bool PcapWriter::open(const std::string& path, Precision p) {
  close();
  path_ = path;
  error_.clear();
  prec_ = p;
  count_ = 0;
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) {
    error_ = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  buf_ = static_cast<char*>(std::malloc(kBuffer));
  if (buf_) std::setvbuf(f_, buf_, _IOFBF, kBuffer);
  FileHeader h{p == Precision::kNano ? 0xa1b23c4du : 0xa1b2c3d4u, 2, 4, 0, 0, 262144, 1};
  if (std::fwrite(&h, sizeof h, 1, f_) != 1) {
    error_ = path + ": write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool PcapWriter::write(Nanos ts, const uint8_t* data, uint32_t len, uint32_t wire_len) {
  return begin(ts, len, wire_len) && append(data, len);
}

bool PcapWriter::begin(Nanos ts, uint32_t len, uint32_t wire_len) {
  if (!f_) return false;
  if (ts < 0) ts = 0;
  RecordHeader r{uint32_t(ts / kSecond),
                 uint32_t(prec_ == Precision::kNano ? ts % kSecond : (ts % kSecond) / 1000), len,
                 wire_len < len ? len : wire_len};
  if (std::fwrite(&r, sizeof r, 1, f_) != 1) {
    if (error_.empty()) error_ = path_ + ": write failed: " + std::strerror(errno);
    return false;
  }
  ++count_;
  return true;
}

bool PcapWriter::append(const uint8_t* data, uint32_t n) {
  if (!f_) return false;
  if (n && std::fwrite(data, n, 1, f_) != 1) {
    if (error_.empty()) error_ = path_ + ": write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool PcapWriter::close() {
  bool ok = true;
  if (f_) {
    if (std::fclose(f_) != 0 && error_.empty())
      error_ = path_ + ": write failed: " + std::strerror(errno);
    ok = error_.empty();
    f_ = nullptr;
  }
  std::free(buf_);
  buf_ = nullptr;
  return ok;
}

bool save_trace(const std::string& path, const Trace& t, Precision p, std::string* error) {
  PcapWriter w;
  bool ok = w.open(path, p);
  for (size_t i = 0; ok && i < t.size(); ++i)
    ok = w.write(t[i].ts, t.data(i), t[i].len, t[i].wire_len);
  ok = w.close() && ok;
  if (!ok && error) *error = w.error();
  return ok;
}

}  // namespace nfpark::trace
