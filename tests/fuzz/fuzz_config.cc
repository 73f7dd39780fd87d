// Fuzz target `config`: the TOML run-config loader (`nfpark run CONFIG.toml`), on arbitrary
// file contents.
//
// Properties: no exception escapes and nothing reads out of bounds; a rejected file gets one
// error line that names the file; loading is deterministic (same verdict, same message); an
// accepted file yields a config every consumer can use as is — each mode's own validation
// passes (PayloadPark slots/max_exp/slices, QUEUE-MEM, NFSlicer), fault probabilities are
// fractions and times are finite and not negative (the flags' rules: issue 14 "TOML accepts what
// the flags reject", open until the config model lands — FUZZ_KNOWN "config_ranges").
// Inputs holding a code point that toml++ 3.3.0 (Debian 12) cannot classify are skipped: its
// is_non_ascii_horizontal_whitespace() reaches TOML_UNREACHABLE (undefined behaviour) for
// U+00A1..U+0499, U+2C5E..U+3057 and U+FB26..U+FEFE — toml++ issue #190, fixed upstream in PR
// #305; a config holding e.g. "½" or "é" where the parser looks for whitespace hits it.
// Building the NF chain from [nf.*] is left out until the config model budgets memory: today a
// large table size in [nf.X] is allocated as asked (issue 14, "memory is budgeted").
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include "dp/run_config.h"
#include "fuzz/check.h"
#include "fuzz/mem_file.h"

namespace nfpark::fuzz {
namespace {

// True if the UTF-8 text holds a code point on which toml++ 3.3.0's whitespace test is UB.
bool toml_ub_code_point(const uint8_t* d, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = d[i], more = 0;
    if (c >= 0xF0)
      c &= 0x07, more = 3;
    else if (c >= 0xE0)
      c &= 0x0F, more = 2;
    else if (c >= 0xC0)
      c &= 0x1F, more = 1;
    else
      continue;
    for (; more && i + 1 < n && (d[i + 1] & 0xC0) == 0x80; --more) c = c << 6 | (d[++i] & 0x3F);
    if ((c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x3057 && c != 0x3000) ||
        (c >= 0xFB26 && c < 0xFEFF))
      return true;
  }
  return false;
}

bool fraction(double p) {
  return std::isfinite(p) && p >= 0 && p <= 1;
}
bool duration(double s) {
  return std::isfinite(s) && s >= 0;
}

void check_loaded(const dp::RunConfig& c) {
  FUZZ_CHECK(c.park.slots >= 1 && c.park.slots <= (1u << 24), "slots %u", c.park.slots);
  FUZZ_CHECK(c.park.max_exp >= 1 && c.park.slices >= 1, "max_exp %u slices %u", c.park.max_exp,
             c.park.slices);
  FUZZ_CHECK(c.queuemem.validate().empty(), "queuemem: %s", c.queuemem.validate().c_str());
  FUZZ_CHECK(!park::check(c.slicer), "nfslicer: %s", park::check(c.slicer)->c_str());
  FUZZ_CHECK(c.nf_config != nullptr, "no [nf] root kept");
  const dp::Faults& f = c.faults;
  FUZZ_KNOWN("config_ranges",
             fraction(f.drop) && fraction(f.dup) && fraction(f.reorder) &&
                 fraction(f.corrupt_tag) && fraction(f.forge_tag) && fraction(f.delay_share),
             "fault probability outside [0, 1] accepted");
  FUZZ_KNOWN("config_ranges",
             duration(f.delay_us) && duration(c.reframe_us) && duration(c.idle_exit_s) &&
                 duration(c.timeout_s) && c.timeout_s > 0,
             "negative, zero or non-finite time accepted (delay %g, reframe %g, idle %g, "
             "timeout %g)",
             f.delay_us, c.reframe_us, c.idle_exit_s, c.timeout_s);
}

}  // namespace
}  // namespace nfpark::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfpark;
  fuzz::known_hit() = nullptr;
  if (fuzz::toml_ub_code_point(data, size)) return -1;
  fuzz::MemFile file("nfpark-fuzz.toml");
  file.set(data, size);
  std::string err[2];
  bool ok[2];
  dp::RunConfig cfg[2];
  for (int i = 0; i < 2; ++i) {
    try {
      ok[i] = dp::load_run_config(file.path(), cfg[i], err[i]);
    } catch (const std::exception& e) {
      FUZZ_CHECK(false, "exception escaped the loader: %s", e.what());
    }
  }
  FUZZ_CHECK(ok[0] == ok[1] && err[0] == err[1], "two loads differ: '%s' / '%s'", err[0].c_str(),
             err[1].c_str());
  if (!ok[0]) {
    FUZZ_CHECK(!err[0].empty(), "rejected without a message");
    FUZZ_CHECK(err[0].rfind(file.path(), 0) == 0, "error does not name the file: %s",
               err[0].c_str());
    FUZZ_KNOWN("config_message", err[0].find_first_of("\n\r") == std::string::npos,
               "multi-line error: %s", err[0].c_str());
    return fuzz::known_hit() ? -1 : 0;
  }
  fuzz::check_loaded(cfg[0]);
  return fuzz::known_hit() ? -1 : 0;
}
