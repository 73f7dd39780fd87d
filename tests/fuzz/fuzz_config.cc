// Fuzz target `config`: the run-config loader (`nfpark run CONFIG.toml`, src/run/load.h) on
// arbitrary file contents: Loader::load_string, then Loader::finish (the chain and every
// [nf.NAME] against the NF registry, the roles, the files, the keys).
//
// Properties: no exception escapes and nothing reads out of bounds; a rejected file gets one
// error line — naming the file when the file's text or one of its values is at fault; loading
// is deterministic (same verdict, same message); an accepted config is one every consumer can
// use as is — each mode's own validation passes (PayloadPark slots/max_exp/slices, QUEUE-MEM,
// NFSlicer), fault rates are fractions, times finite and not negative, and every mode that
// issues tags or tokens has a key.
// Inputs holding a code point that toml++ 3.3.0 (Debian 12) cannot classify are skipped: its
// is_non_ascii_horizontal_whitespace() reaches TOML_UNREACHABLE (undefined behaviour) for
// U+00A1..U+0499, U+2C5E..U+3057 and U+FB26..U+FEFE — toml++ issue #190, fixed upstream in PR
// #305; a config holding e.g. "½" or "é" where the parser looks for whitespace hits it.
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "run/load.h"

namespace nfpark::fuzz {
namespace {

constexpr const char* kName = "fuzz.toml";

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

void check_loaded(const run::RunConfig& c) {
  FUZZ_CHECK(c.park.slots >= 1 && c.park.max_exp >= 1 && c.park.slices >= 1,
             "slots %u max_exp %u slices %u", c.park.slots, c.park.max_exp, c.park.slices);
  FUZZ_CHECK(c.queuemem.validate().empty(), "queuemem: %s", c.queuemem.validate().c_str());
  FUZZ_CHECK(!park::check(c.slicer), "nfslicer: %s", park::check(c.slicer)->c_str());
  const run::Faults& f = c.faults;
  FUZZ_CHECK(fraction(f.drop) && fraction(f.dup) && fraction(f.reorder) &&
                 fraction(f.corrupt_tag) && fraction(f.forge_tag) && fraction(f.delay_share),
             "fault rate outside [0, 1] accepted");
  FUZZ_CHECK(duration(f.delay_us) && duration(c.reframe_us) && duration(c.idle_exit_s) &&
                 duration(c.timeout_s) && c.timeout_s > 0,
             "negative, zero or non-finite time accepted (delay %g, reframe %g, idle %g, "
             "timeout %g)",
             f.delay_us, c.reframe_us, c.idle_exit_s, c.timeout_s);
  if (c.role != run::Role::kNf &&
      (c.mode == run::Mode::kPayloadPark || c.mode == run::Mode::kQueueMem))
    FUZZ_CHECK(c.park.key || c.queuemem.key, "a mode that issues tags has no key");
}

struct Outcome {
  bool loaded = false, finished = false;
  std::string err;
};

Outcome load(std::string_view text) {
  Outcome o;
  try {
    run::Loader l;
    o.loaded = l.load_string(text, kName, o.err);
    o.finished = o.loaded && l.finish(o.err);
    if (o.finished) check_loaded(l.config());
  } catch (const std::exception& e) {
    FUZZ_CHECK(false, "exception escaped the loader: %s", e.what());
  }
  return o;
}

}  // namespace
}  // namespace nfpark::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfpark::fuzz;
  known_hit() = nullptr;
  if (toml_ub_code_point(data, size)) return -1;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Outcome a = load(text), b = load(text);
  FUZZ_CHECK(a.loaded == b.loaded && a.finished == b.finished && a.err == b.err,
             "two loads differ: '%s' / '%s'", a.err.c_str(), b.err.c_str());
  if (a.finished) return 0;
  FUZZ_CHECK(!a.err.empty(), "rejected without a message");
  FUZZ_KNOWN("config_message", a.err.find_first_of("\n\r") == std::string::npos,
             "multi-line error: %s", a.err.c_str());
  if (!a.loaded)  // the file's text or one of its values: the message names the file
    FUZZ_CHECK(a.err.rfind(kName, 0) == 0, "error does not name the file: %s", a.err.c_str());
  return known_hit() ? -1 : 0;
}
