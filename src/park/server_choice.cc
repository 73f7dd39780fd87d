#include "park/server_choice.h"

namespace nfpark::park {

std::optional<Spread> parse_spread(std::string_view s) {
  if (s == "five_tuple") return Spread::kFiveTuple;
  if (s == "src_ip") return Spread::kSrcIp;
  if (s == "symmetric") return Spread::kSymmetric;
  return std::nullopt;
}

std::string_view to_string(Spread s) {
  switch (s) {
    case Spread::kFiveTuple:
      return "five_tuple";
    case Spread::kSrcIp:
      return "src_ip";
    case Spread::kSymmetric:
      return "symmetric";
  }
  return "?";
}

}  // namespace nfpark::park
