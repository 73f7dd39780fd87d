#include "trace/pcap_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "trace/link_layer.h"

namespace nfpark::trace {

namespace {
constexpr uint32_t kMagicUs = 0xa1b2c3d4, kMagicNs = 0xa1b23c4d;
constexpr uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kObsoletePb = 2, kSpb = 3, kEpb = 6;
constexpr uint32_t kByteOrderMagic = 0x1A2B3C4D;
constexpr uint32_t kMaxCaptured = kMaxFrame;  // a record above this is taken for corruption

uint32_t raw32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}
}  // namespace

const char* to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kPcapMicro:
      return "pcap (microseconds)";
    case TraceFormat::kPcapNano:
      return "pcap (nanoseconds)";
    case TraceFormat::kPcapng:
      return "pcapng";
  }
  return "?";
}

uint16_t TraceReader::u16(const uint8_t* p) const {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return swap_ ? __builtin_bswap16(v) : v;
}
uint32_t TraceReader::u32(const uint8_t* p) const {
  uint32_t v = raw32(p);
  return swap_ ? __builtin_bswap32(v) : v;
}

ReadStatus TraceReader::fail(const std::string& what) {
  error_ = path_ + ": " + what;
  return ReadStatus::kError;
}

void TraceReader::close() {
  if (map_) munmap(const_cast<uint8_t*>(map_), size_);
  map_ = nullptr;
  size_ = pos_ = count_ = 0;
}

bool TraceReader::open(const std::string& path) {
  close();
  path_ = path;
  error_.clear();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno)), false;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file"), false;
  }
  size_ = uint64_t(st.st_size);
  if (size_ < 4) {
    ::close(fd);
    return fail(size_ == 0 ? "empty file" : "not a pcap/pcapng file (shorter than 4 bytes)"), false;
  }
  void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return fail(std::string("cannot map: ") + std::strerror(errno)), false;
  map_ = static_cast<const uint8_t*>(m);
  madvise(m, size_, MADV_SEQUENTIAL);

  uint32_t magic = raw32(map_);
  if (magic == kMagicUs || magic == kMagicNs || __builtin_bswap32(magic) == kMagicUs ||
      __builtin_bswap32(magic) == kMagicNs) {
    swap_ = magic != kMagicUs && magic != kMagicNs;
    format_ = u32(map_) == kMagicNs ? TraceFormat::kPcapNano : TraceFormat::kPcapMicro;
    if (size_ < 24)
      return fail("pcap file header truncated (" + std::to_string(size_) + " of 24 bytes)"), false;
    // as libpcap: 2.4 (and 2.3, the same layout); 2.0-2.2 swap caplen and len, others are unknown
    const uint16_t major = u16(map_ + 4), minor = u16(map_ + 6);
    if (major != 2 || minor < 3 || minor > 4)
      return fail("pcap version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (nfpark reads 2.3 and 2.4)"),
             false;
    // The field's low 16 bits are the link type; the high 16 carry an FCS length and its
    // "present" flag (bit 26), which libpcap's LT_LINKTYPE() masks off too: tcpdump's
    // bootp_asan.pcap is Ethernet written as 0x04000001. The frames keep their FCS bytes.
    link_ = u32(map_ + 20) & 0xFFFF;
    if (!link_supported(link_)) return fail(link_refusal(link_)), false;
    pos_ = 24;
    return true;
  }
  if (magic == kShb) {
    format_ = TraceFormat::kPcapng;
    return read_shb(0);
  }
  return fail("not a pcap/pcapng file (magic " + hex32(__builtin_bswap32(magic)) + ")"), false;
}

ReadStatus TraceReader::next(PacketRecord& rec) {
  if (!map_) return fail("not open");
  return format_ == TraceFormat::kPcapng ? next_pcapng(rec) : next_pcap(rec);
}

ReadStatus TraceReader::next_pcap(PacketRecord& rec) {
  if (pos_ == size_) return ReadStatus::kEnd;
  const uint64_t n = count_ + 1;
  if (size_ - pos_ < 16)
    return fail("packet " + std::to_string(n) + " truncated (record header has " +
                std::to_string(size_ - pos_) + " of 16 bytes)");
  const uint8_t* h = map_ + pos_;
  uint32_t sec = u32(h), frac = u32(h + 4), incl = u32(h + 8), orig = u32(h + 12);
  if (incl > kMaxCaptured)
    return fail("packet " + std::to_string(n) + ": captured length " + std::to_string(incl) +
                " is implausible (corrupt file?)");
  if (size_ - pos_ - 16 < incl)
    return fail("packet " + std::to_string(n) + " truncated (record says " + std::to_string(incl) +
                " bytes, " + std::to_string(size_ - pos_ - 16) + " left in the file)");
  const bool nano = format_ == TraceFormat::kPcapNano;
  if (frac >= (nano ? 1000000000u : 1000000u))  // a later second in disguise: a corrupt record
    return fail("packet " + std::to_string(n) + ": timestamp fraction " + std::to_string(frac) +
                (nano ? " ns is not below 10^9" : " us is not below 10^6") + " (corrupt file?)");
  rec.ts = Nanos(sec) * kSecond + (nano ? Nanos(frac) : Nanos(frac) * 1000);
  rec.data = h + 16;
  rec.len = incl;
  rec.wire_len = orig < incl ? incl : orig;
  pos_ += 16 + uint64_t(incl);
  ++count_;
  return convert(link_, rec);
}

ReadStatus TraceReader::convert(uint32_t link, PacketRecord& rec) {
  if (link == linktype::kEthernet) return ReadStatus::kPacket;
  if (conv_.empty()) conv_.resize(kMaxFrame);
  uint32_t len = 0, wire = 0;
  std::string why = to_ethernet(link, rec.data, rec.len, rec.wire_len, conv_.data(), len, wire);
  if (!why.empty()) return fail("packet " + std::to_string(count_) + ": " + why);
  rec.data = conv_.data();
  rec.len = len;
  rec.wire_len = wire;
  return ReadStatus::kPacket;
}

bool TraceReader::read_shb(uint64_t at) {
  if (size_ - at < 28) return fail("pcapng section header truncated"), false;
  uint32_t bom = raw32(map_ + at + 8);
  if (bom == kByteOrderMagic)
    swap_ = false;
  else if (__builtin_bswap32(bom) == kByteOrderMagic)
    swap_ = true;
  else
    return fail("pcapng section header has a bad byte-order magic " + hex32(bom)), false;
  uint32_t blen = u32(map_ + at + 4);
  if (blen < 28 || blen % 4 || blen > size_ - at)
    return fail("pcapng section header has a bad length " + std::to_string(blen)), false;
  const uint16_t major = u16(map_ + at + 12), minor = u16(map_ + at + 14);
  if (major != 1 || (minor != 0 && minor != 2))  // as libpcap: 1.0, and 1.2 some tools wrote
    return fail("pcapng version " + std::to_string(major) + "." + std::to_string(minor) +
                " is not supported (nfpark reads 1.0)"),
           false;
  n_ifaces_ = 0;
  pos_ = at + blen;
  return true;
}

bool TraceReader::read_idb(const uint8_t* b, uint32_t blen) {
  if (blen < 8) return fail("pcapng interface block too short"), false;
  if (n_ifaces_ == kMaxIfaces) return fail("more than 64 pcapng interfaces"), false;
  uint32_t link = u16(b);
  if (!link_supported(link))
    return fail("pcapng interface " + std::to_string(n_ifaces_) + ": " + link_refusal(link)), false;
  Iface ifc;
  ifc.link = link;
  link_ = link;
  ifc.snaplen = u32(b + 4);
  for (uint32_t o = 8; o + 4 <= blen;) {
    uint16_t code = u16(b + o), len = u16(b + o + 2);
    if (code == 0) break;
    if (o + 4 + len > blen) return fail("pcapng interface option overruns its block"), false;
    const uint8_t* v = b + o + 4;
    if (code == 9 && len >= 1) {
      ifc.pow2 = v[0] & 0x80;
      ifc.exp = v[0] & 0x7F;
      if ((!ifc.pow2 && ifc.exp > 18) || (ifc.pow2 && ifc.exp > 62))
        return fail("pcapng if_tsresol " + std::to_string(v[0]) + " not supported"), false;
    } else if (code == 14 && len >= 8) {
      uint64_t off = uint64_t(u32(v)) | uint64_t(u32(v + 4)) << 32;
      if (swap_) off = uint64_t(u32(v)) << 32 | u32(v + 4);
      ifc.offset_s = int64_t(off);
    }
    o += 4 + ((len + 3u) & ~3u);
  }
  ifaces_[n_ifaces_++] = ifc;
  return true;
}

bool TraceReader::ticks_to_ns(const Iface& i, uint64_t t, Nanos& out) const {
  __int128 ns;
  if (i.pow2) {
    ns = (__int128(t) * 1000000000) >> i.exp;
  } else if (i.exp <= 9) {
    static constexpr int64_t kPow10[] = {1,      10,      100,      1000,      10000,
                                         100000, 1000000, 10000000, 100000000, 1000000000};
    ns = __int128(t) * kPow10[9 - i.exp];
  } else {
    __int128 d = 1;
    for (int k = 9; k < i.exp; ++k) d *= 10;
    ns = __int128(t) / d;
  }
  ns += __int128(i.offset_s) * 1000000000;  // if_tsoffset: whole seconds, may be negative
  if (ns > INT64_MAX || ns < INT64_MIN) return false;
  out = Nanos(ns);
  return true;
}

ReadStatus TraceReader::next_pcapng(PacketRecord& rec) {
  for (;;) {
    if (pos_ == size_) return ReadStatus::kEnd;
    const uint64_t n = count_ + 1;
    if (size_ - pos_ < 12)
      return fail("pcapng block truncated at byte " + std::to_string(pos_) + " (before packet " +
                  std::to_string(n) + ")");
    const uint8_t* h = map_ + pos_;
    uint32_t type = raw32(h);
    if (type == kShb) {
      if (!read_shb(pos_)) return ReadStatus::kError;
      continue;
    }
    uint32_t blen = u32(h + 4);
    if (blen < 12 || blen % 4)
      return fail("pcapng block at byte " + std::to_string(pos_) + " has a bad length " +
                  std::to_string(blen));
    if (blen > size_ - pos_)
      return fail("pcapng block at byte " + std::to_string(pos_) + " truncated (packet " +
                  std::to_string(n) + "?): says " + std::to_string(blen) + " bytes, " +
                  std::to_string(size_ - pos_) + " left");
    type = u32(h);
    const uint8_t* b = h + 8;
    const uint32_t body = blen - 12;
    pos_ += blen;
    if (type == kIdb) {
      if (!read_idb(b, body)) return ReadStatus::kError;
      continue;
    }
    uint32_t iface = 0, cap = 0, orig = 0, hdr = 0;
    uint64_t ticks = 0;
    if (type == kEpb || type == kObsoletePb) {
      if (body < 20) return fail("packet " + std::to_string(n) + ": packet block too short");
      iface = type == kEpb ? u32(b) : u16(b);
      ticks = uint64_t(u32(b + 4)) << 32 | u32(b + 8);
      cap = u32(b + 12);
      orig = u32(b + 16);
      hdr = 20;
    } else if (type == kSpb) {
      if (body < 4) return fail("packet " + std::to_string(n) + ": simple packet block too short");
      orig = u32(b);
      hdr = 4;
      cap = body - 4;
      if (cap > orig) cap = orig;
      if (n_ifaces_ > 0 && ifaces_[0].snaplen && cap > ifaces_[0].snaplen) cap = ifaces_[0].snaplen;
    } else {
      continue;  // unknown or uninteresting block (NRB, ISB, DSB, custom...): skip
    }
    if (int64_t(iface) >= n_ifaces_)
      return fail("packet " + std::to_string(n) + " refers to interface " + std::to_string(iface) +
                  " with no interface description block");
    if (cap > body - hdr)
      return fail("packet " + std::to_string(n) + " truncated (block holds " +
                  std::to_string(body - hdr) + " bytes, captured length says " +
                  std::to_string(cap) + ")");
    rec.ts = 0;
    if (type != kSpb && !ticks_to_ns(ifaces_[iface], ticks, rec.ts))
      return fail("packet " + std::to_string(n) +
                  ": timestamp out of range (beyond the year 2262 in nanoseconds; if_tsoffset?)");
    rec.data = b + hdr;
    rec.len = cap;
    rec.wire_len = orig < cap ? cap : orig;
    ++count_;
    return convert(ifaces_[iface].link, rec);
  }
}

bool load_trace(const std::string& path, Trace& out, std::string* error) {
  TraceReader r;
  if (!r.open(path)) {
    if (error) *error = r.error();
    return false;
  }
  out.reserve(out.size() + r.file_bytes() / 64, out.arena_bytes() + r.file_bytes());
  PacketRecord rec;
  for (;;) {
    ReadStatus s = r.next(rec);
    if (s == ReadStatus::kEnd) return true;
    if (s == ReadStatus::kError) {
      if (error) *error = r.error();
      return false;
    }
    out.add(rec.ts, rec.data, rec.len, rec.wire_len);
  }
}

}  // namespace nfpark::trace
