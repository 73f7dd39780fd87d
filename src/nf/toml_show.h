// A TOML value rendered as the user wrote it, for error messages ("… got [ 0.05, 1 ]").
//
// Arrays and inline tables are joined here rather than by toml++'s formatter: 3.3.0 (Debian 12)
// estimates a container's line width with size_t(log10(x)), undefined behaviour for any float
// in (0, 0.1), e.g. `[0.05]` (found by fuzz_config; regression input
// tests/fuzz/regressions/config/toml-formatter-small-float). Scalars still print through toml++.
#pragma once

#include <string>

namespace toml {
inline namespace v3 {
class node;
}  // namespace v3
}  // namespace toml

namespace nfpark::nf {

std::string show_toml(const toml::node& n);

}  // namespace nfpark::nf
