// JsonWriter: a small streaming JSON writer for command output (`--json`). Keys keep their
// insertion order; numbers print exactly (integers) or with 6 significant digits (doubles).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace nfpark {

class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {}) { return open(key, '{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(std::string_view key = {}) { return open(key, '['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& value(std::string_view key, uint64_t v) { return raw(key, std::to_string(v)); }
  JsonWriter& value(std::string_view key, int64_t v) { return raw(key, std::to_string(v)); }
  JsonWriter& value(std::string_view key, int v) { return raw(key, std::to_string(v)); }
  JsonWriter& value(std::string_view key, bool v) { return raw(key, v ? "true" : "false"); }
  JsonWriter& value(std::string_view key, double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return raw(key, b);
  }
  JsonWriter& value(std::string_view key, std::string_view s) { return raw(key, quote(s)); }
  JsonWriter& value(std::string_view key, const char* s) { return value(key, std::string_view(s)); }
  const std::string& str() const { return out_; }

  static std::string quote(std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') {
        q += '\\';
        q += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        q += b;
      } else {
        q += c;
      }
    }
    return q + "\"";
  }

 private:
  JsonWriter& open(std::string_view key, char c) {
    sep(key);
    out_ += c;
    first_ = true;
    return *this;
  }
  JsonWriter& close(char c) {
    out_ += c;
    first_ = false;
    return *this;
  }
  JsonWriter& raw(std::string_view key, const std::string& v) {
    sep(key);
    out_ += v;
    return *this;
  }
  void sep(std::string_view key) {
    if (!first_) out_ += ", ";
    first_ = false;
    if (!key.empty()) out_ += quote(key) + ": ";
  }
  std::string out_;
  bool first_ = true;
};

}  // namespace nfpark
