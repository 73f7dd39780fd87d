// RunSecret: the per-run secret every mode's tags and tokens are keyed with, and the keys drawn
// from it.
//
// One 128-bit secret per run: from the OS (getrandom(2)) unless the user sets it (`--secret HEX`,
// `[run] secret`) to make a run reproducible. It never leaves the switch process (the NF side
// validates nothing) and is never printed. Each use gets its own key, derive_key(secret, label):
//   key = SipHash-2-4(secret, label | 0x01) || SipHash-2-4(secret, label | 0x02)   (LE words)
// so knowing one derived key (e.g. a `--tag-key` given for the tags) tells nothing of another.
// Labels in use: kLabelParkTag, kLabelQueueMemTag, kLabelSlicerGen (one per mode's tag/token).
//
// API (kept stable for the fuzz targets):
//   parse_key_hex(hex, key)    32 hex digits -> key; false on anything else
//   os_random_key(key, err)    128 bits from getrandom(2); false with err if the OS refused
//   derive_key(secret, label)  the key for one use, as above
#pragma once
#include <string>
#include <string_view>

#include "park/siphash.h"

namespace nfpark::park {

inline constexpr std::string_view kLabelParkTag = "nfpark/payloadpark-tag";
inline constexpr std::string_view kLabelQueueMemTag = "nfpark/queuemem-tag";
inline constexpr std::string_view kLabelSlicerGen = "nfpark/nfslicer-generation";

bool parse_key_hex(std::string_view hex, Key128& key);
bool os_random_key(Key128& key, std::string& err);
Key128 derive_key(const Key128& secret, std::string_view label);

}  // namespace nfpark::park
