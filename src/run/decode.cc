// decode_text / decode_given (settings.h): one rule per kind of setting, whether the value came
// from a flag's text or from a TOML file, and one message for a value that does not fit.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "park/no_split.h"
#include "run/settings.h"

namespace nfpark::run {

namespace {

std::string number(double v) {
  if (v >= 1.8e19) return "18446744073709551615";
  char b[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string unit(const Setting& s) {
  return s.unit.empty() ? "" : " (" + std::string(s.unit) + ")";
}

std::string range(const Setting& s) {
  return "from " + number(s.min) + " to " + number(s.max);
}

std::vector<std::string_view> split(std::string_view v, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  for (;;) {
    size_t at = v.find(sep, pos);
    out.push_back(v.substr(pos, at == std::string_view::npos ? std::string_view::npos : at - pos));
    if (at == std::string_view::npos) return out;
    pos = at + 1;
  }
}

// An unsigned decimal integer (no sign, no blanks, no exponent); false when it is none or
// does not fit 64 bits.
bool parse_u64(std::string_view t, uint64_t& out) {
  if (t.empty() || t.size() > 20) return false;
  for (char c : t)
    if (c < '0' || c > '9') return false;
  std::string z(t);
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(z.c_str(), &end, 10);
  if (errno || *end) return false;
  out = v;
  return true;
}

bool in_range(const Setting& s, uint64_t v) {
  return double(v) >= s.min && (s.max >= 1.8e19 || double(v) <= s.max);
}

bool choice_ok(const Setting& s, std::string_view v) {
  for (std::string_view c : split(s.choices, '|'))
    if (c == v) return true;
  return false;
}

bool key_ok(const std::string& v) {
  std::array<uint8_t, 16> k{};
  return parse_tag_key(v, k);
}

bool prefix_ok(const std::string& v) {
  park::Prefix p;
  std::string e;
  return park::parse_prefix(v, p, e);
}

// `got` quotes the user's value (a TOML array may span lines): the message stays one line.
bool fail(const Setting& s, std::string got, std::string& why) {
  for (char& c : got)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  why = "expected " + expected(s) + ", got " + got;
  return false;
}

}  // namespace

std::string expected(const Setting& s) {
  switch (s.kind) {
    case Kind::kBool:
      return "true or false";
    case Kind::kInt:
      return "an integer " + range(s) + unit(s);
    case Kind::kReal:
      return "a number " + range(s) + unit(s);
    case Kind::kText:
      return "a string";
    case Kind::kChoice: {
      std::string v;
      for (std::string_view c : split(s.choices, '|'))
        v += (v.empty() ? "" : ", ") + std::string(c);
      return "one of " + v;
    }
    case Kind::kKey:
      return "32 hex digits (a 128-bit key)";
    case Kind::kPorts:
      return "two port specs (flag: A+B; file: [\"A\", \"B\"])";
    case Kind::kIntOrAll:
      return "all or an integer " + range(s) + unit(s);
    case Kind::kInts:
      return "a list of integers " + range(s) + " (flag: comma-separated)";
    case Kind::kPrefixes:
      return "a list of IP prefixes like 192.0.2.0/24 or 2001:db8::/32 (flag: comma-separated)";
  }
  return "?";
}

bool decode_text(const Setting& s, std::string_view text, Value& out, std::string& why) {
  const std::string t(text);
  switch (s.kind) {
    case Kind::kBool:
      if (t != "true" && t != "false") return fail(s, t, why);
      out.b = t == "true";
      return true;
    case Kind::kInt:
      if (!parse_u64(t, out.u) || !in_range(s, out.u)) return fail(s, t, why);
      return true;
    case Kind::kIntOrAll:
      if (t == "all") return out.u = 0, true;
      if (!parse_u64(t, out.u) || !in_range(s, out.u)) return fail(s, t, why);
      return true;
    case Kind::kReal: {
      char* end = nullptr;
      errno = 0;
      out.d = std::strtod(t.c_str(), &end);
      if (t.empty() || *end || errno || !std::isfinite(out.d) || out.d < s.min || out.d > s.max)
        return fail(s, t, why);
      return true;
    }
    case Kind::kText:
      out.s = t;
      return true;
    case Kind::kChoice:
      if (!choice_ok(s, t)) return fail(s, t, why);
      out.s = t;
      return true;
    case Kind::kKey:
      if (!key_ok(t)) return fail(s, t, why);
      out.s = t;
      return true;
    case Kind::kPorts: {
      auto parts = split(text, '+');
      if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) return fail(s, t, why);
      out.list = {std::string(parts[0]), std::string(parts[1])};
      return true;
    }
    case Kind::kInts:
      out.ints.clear();
      for (std::string_view p : split(text, ',')) {
        uint64_t v = 0;
        if (!parse_u64(p, v) || !in_range(s, v)) return fail(s, t, why);
        out.ints.push_back(v);
      }
      return true;
    case Kind::kPrefixes:
      out.list.clear();
      for (std::string_view p : split(text, ',')) {
        if (!prefix_ok(std::string(p))) return fail(s, t, why);
        out.list.emplace_back(p);
      }
      return true;
  }
  return fail(s, t, why);
}

bool decode_given(const Setting& s, const Given& g, Value& out, std::string& why) {
  switch (s.kind) {
    case Kind::kBool:
      if (!g.b) return fail(s, g.shown, why);
      out.b = *g.b;
      return true;
    case Kind::kInt:
    case Kind::kIntOrAll:
      if (s.kind == Kind::kIntOrAll && g.s && *g.s == "all") return out.u = 0, true;
      if (!g.i || *g.i < 0 || !in_range(s, uint64_t(*g.i))) return fail(s, g.shown, why);
      out.u = uint64_t(*g.i);
      return true;
    case Kind::kReal: {
      double d = g.i ? double(*g.i) : g.d ? *g.d : NAN;
      if (!std::isfinite(d) || d < s.min || d > s.max) return fail(s, g.shown, why);
      out.d = d;
      return true;
    }
    case Kind::kText:
    case Kind::kChoice:
    case Kind::kKey:
      if (!g.s) return fail(s, g.shown, why);
      return decode_text(s, *g.s, out, why) || fail(s, g.shown, why);
    case Kind::kPorts:
      if (!g.list || g.list->size() != 2 || !(*g.list)[0].s || !(*g.list)[1].s ||
          (*g.list)[0].s->empty() || (*g.list)[1].s->empty())
        return fail(s, g.shown, why);
      out.list = {*(*g.list)[0].s, *(*g.list)[1].s};
      return true;
    case Kind::kInts:
      if (!g.list) return fail(s, g.shown, why);
      out.ints.clear();
      for (const Given& e : *g.list) {
        if (!e.i || *e.i < 0 || !in_range(s, uint64_t(*e.i))) return fail(s, g.shown, why);
        out.ints.push_back(uint64_t(*e.i));
      }
      return true;
    case Kind::kPrefixes:
      if (!g.list) return fail(s, g.shown, why);
      out.list.clear();
      for (const Given& e : *g.list) {
        if (!e.s || !prefix_ok(*e.s)) return fail(s, g.shown, why);
        out.list.push_back(*e.s);
      }
      return true;
  }
  return fail(s, g.shown, why);
}

}  // namespace nfpark::run
