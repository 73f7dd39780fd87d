#include "park/secret.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace nfpark::park {

bool parse_key_hex(std::string_view hex, Key128& key) {
  if (hex.size() != 32) return false;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Key128 k{};
  for (size_t i = 0; i < 16; ++i) {
    const int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    k[i] = uint8_t(hi << 4 | lo);
  }
  key = k;
  return true;
}

bool os_random_key(Key128& key, std::string& err) {
  size_t got = 0;
  while (got < key.size()) {
    const ssize_t n = getrandom(key.data() + got, key.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = std::string("cannot read a secret from the OS (getrandom: ") + std::strerror(errno) +
            "); give one with --secret HEX";
      return false;
    }
    got += size_t(n);
  }
  return true;
}

Key128 derive_key(const Key128& secret, std::string_view label) {
  std::vector<uint8_t> msg(label.begin(), label.end());
  msg.push_back(0x01);
  const uint64_t a = siphash24(secret, msg.data(), msg.size());
  msg.back() = 0x02;
  const uint64_t b = siphash24(secret, msg.data(), msg.size());
  Key128 k;
  std::memcpy(k.data(), &a, 8);
  std::memcpy(k.data() + 8, &b, 8);
  return k;
}

}  // namespace nfpark::park
