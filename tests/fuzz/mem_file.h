// MemFile: a fuzz input as a file (memfd, named /proc/self/fd/N) for code that opens paths — the
// pcap reader, the pcap writer, the TOML loader — without touching the disk.
//
// The pcap reader memory-maps its file, and a read past the end of a mapping is invisible to
// AddressSanitizer (mapped pages are not heap). So the harness interposes mmap/munmap: a mapping
// of a MemFile becomes a heap block of exactly the file's size holding its bytes, and every read
// outside it is reported. Any other mapping goes to the kernel unchanged. `mapped()` tells whether
// the interposition took place (a harness asserts it, so a reader that stops mapping its file is
// noticed rather than silently checked less).
#pragma once
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nfpark::fuzz {

struct HeapMapping {
  void* addr = nullptr;
  size_t len = 0;
};

struct MemFileState {
  ino_t ino = 0;  // the MemFile whose mappings become heap blocks (0: none)
  dev_t dev = 0;
  std::vector<HeapMapping> live;
  uint64_t mapped = 0;
};
inline MemFileState& memfile_state() {
  static MemFileState s;
  return s;
}

class MemFile {
 public:
  explicit MemFile(const char* name = "nfpark-fuzz") : fd_(memfd_create(name, 0)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
    struct stat st {};
    fstat(fd_, &st);
    memfile_state().ino = st.st_ino;
    memfile_state().dev = st.st_dev;
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile() {
    memfile_state().ino = 0;
    close(fd_);
  }
  // Replaces the file's content.
  void set(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      ssize_t w = pwrite(fd_, data + done, size - done, off_t(done));
      if (w <= 0) std::abort();
      done += size_t(w);
    }
  }
  std::vector<uint8_t> get() const {
    struct stat st {};
    fstat(fd_, &st);
    std::vector<uint8_t> b(size_t(st.st_size));
    if (!b.empty() && pread(fd_, b.data(), b.size(), 0) != ssize_t(b.size())) std::abort();
    return b;
  }
  const std::string& path() const { return path_; }
  uint64_t mapped() const { return memfile_state().mapped; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace nfpark::fuzz

// The interposers (defined once per fuzz binary: include this header from one .cc only).
extern "C" void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  auto& s = nfpark::fuzz::memfile_state();
  struct stat st {};
  if (fd >= 0 && s.ino && off == 0 && !(prot & PROT_WRITE) && fstat(fd, &st) == 0 &&
      st.st_ino == s.ino && st.st_dev == s.dev) {
    void* p = std::malloc(len ? len : 1);
    size_t done = 0;
    while (done < len) {
      ssize_t r = pread(fd, static_cast<char*>(p) + done, len - done, off_t(done));
      if (r <= 0) break;
      done += size_t(r);
    }
    if (done != len) {  // shorter than asked: as the kernel, refuse (SIGBUS would follow)
      std::free(p);
      errno = EINVAL;
      return MAP_FAILED;
    }
    s.live.push_back({p, len});
    ++s.mapped;
    return p;
  }
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}

extern "C" int munmap(void* addr, size_t len) {
  auto& live = nfpark::fuzz::memfile_state().live;
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i].addr == addr) {
      std::free(addr);
      live.erase(live.begin() + long(i));
      return 0;
    }
  }
  return int(syscall(SYS_munmap, addr, len));
}
