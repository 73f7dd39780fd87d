// Property checks for the fuzz targets, under libFuzzer and in the replay driver alike.
//
//   FUZZ_CHECK(cond, "fmt", ...)          a property every input must keep: prints the message
//                                         and aborts (libFuzzer saves the input as a crash).
//   FUZZ_KNOWN("id", cond, "fmt", ...)    the same, for a property that an open finding in code
//                                         someone else is changing still breaks (kOpenFindings):
//                                         the violation is counted and the input rejected
//                                         (known_hit()), not reported — unless NFPARK_FUZZ_STRICT
//                                         names it (or is 1), or the id is no longer listed.
// Once the fix is merged, its id leaves kOpenFindings and the property is enforced again.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace nfpark::fuzz {

// Findings reported to the lead, fixed on other branches (docs/testing.md, "Open findings").
inline constexpr std::string_view kOpenFindings[] = {
    "drop_notice_twice",  // secure/qmem: a late drop notification is counted as a switch drop
    "config_message",     // config: a TOML error quotes the file's raw newline (two-line error)
};

[[noreturn]] inline void fail(const char* file, int line, const char* what) {
  std::fprintf(stderr, "\n%s:%d: fuzz property violated: %s\n", file, line, what);
  std::fflush(stderr);
  std::abort();
}

// NFPARK_FUZZ_STRICT=1 enforces every open finding's property; NFPARK_FUZZ_STRICT=a,b only those.
inline bool enforced(std::string_view id) {
  static const char* e = std::getenv("NFPARK_FUZZ_STRICT");
  if (!e || !*e || std::string_view(e) == "0") return false;
  const std::string_view all(e);
  if (all == "1") return true;
  for (size_t at = 0; at <= all.size();) {
    const size_t end = std::min(all.find(',', at), all.size());
    if (all.substr(at, end - at) == id) return true;
    at = end + 1;
  }
  return false;
}

inline bool is_open(std::string_view id) {
  if (enforced(id)) return false;
  for (std::string_view k : kOpenFindings)
    if (k == id) return true;
  return false;
}

// The open finding the current input hit, if any (reset by the target for each input).
inline const char*& known_hit() {
  static const char* hit = nullptr;
  return hit;
}

}  // namespace nfpark::fuzz

#define FUZZ_CHECK(cond, ...)                                  \
  do {                                                         \
    if (!(cond)) [[unlikely]] {                                \
      char fuzz_msg_[512];                                     \
      std::snprintf(fuzz_msg_, sizeof fuzz_msg_, __VA_ARGS__); \
      ::nfpark::fuzz::fail(__FILE__, __LINE__, fuzz_msg_);     \
    }                                                          \
  } while (0)

#define FUZZ_KNOWN(id, cond, ...)                                            \
  do {                                                                       \
    if (!(cond)) [[unlikely]] {                                              \
      if (::nfpark::fuzz::is_open(id)) {                                     \
        ::nfpark::fuzz::known_hit() = id;                                    \
      } else {                                                               \
        char fuzz_msg_[512];                                                 \
        std::snprintf(fuzz_msg_, sizeof fuzz_msg_, "[" id "] " __VA_ARGS__); \
        ::nfpark::fuzz::fail(__FILE__, __LINE__, fuzz_msg_);                 \
      }                                                                      \
    }                                                                        \
  } while (0)
