// Tokenizer: memcached's text-protocol tokenizer and number parsers, reproduced exactly.
//
// Conformance with memcached 1.6 depends on these details, so they follow its proto_text.c and
// util.c to the letter rather than "improving" them:
//  - a command line is cut at its first NUL byte (memcached calls strlen on it);
//  - tokens are separated by ' ' only (tabs and '\r' belong to tokens);
//  - at most kMaxTokens - 1 tokens are split off; the terminal token then points at the rest of
//    the line (value non-null) so that `get` can tokenize long key lists in pieces;
//  - numbers parse with strtoul/strtol/strtoull semantics: leading whitespace and '+' accepted,
//    trailing whitespace accepted, a '-' rejected for unsigned values only when the result wraps,
//    and 64-bit results truncated to 32 bits (memcached stores `long` into `uint32_t`/`int32_t`).
// Every function reads only [line, line + strlen(line)]: fuzzed in tests/kvs/protocol_fuzz_test.
#pragma once
#include <cstddef>
#include <cstdint>

namespace nfpark::kvs {

struct Token {
  char* value = nullptr;  // NUL-terminated in place; nullptr for a fully scanned terminal token
  size_t length = 0;      // 0 marks the terminal token
};

constexpr size_t kMaxTokens = 24;  // memcached's MAX_TOKENS

// Splits `command` (NUL-terminated, modified in place) into at most max_tokens tokens including
// the terminal one. Returns the number of tokens written, terminal token included.
size_t tokenize_command(char* command, Token* tokens, size_t max_tokens);

bool safe_strtoul(const char* str, uint32_t* out);   // flags
bool safe_strtol(const char* str, int32_t* out);     // exptime, byte counts
bool safe_strtoull(const char* str, uint64_t* out);  // cas unique

}  // namespace nfpark::kvs
