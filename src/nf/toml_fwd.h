// Forward declaration of toml++'s table, so NF headers can name their config source without
// pulling the whole TOML parser into every translation unit (only the .cc files that parse
// include <toml++/toml.h>). Matches toml++ 3.x's inline namespace.
#pragma once

namespace toml {
inline namespace v3 {
class table;
}  // namespace v3
}  // namespace toml
