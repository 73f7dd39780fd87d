#include "kvs/protocol.h"

#include <climits>
#include <cstring>

namespace nfpark::kvs {

namespace {
constexpr size_t kKeyMax = 250;    // memcached's KEY_MAX_LENGTH
constexpr int kReqsPerEvent = 20;  // memcached's default -R
constexpr int64_t kRealtimeMaxDelta = 60 * 60 * 24 * 30;
constexpr size_t kLongLine = 2048;  // no newline past this: not a command
bool is(const Token& t, const char* s) {
  return std::strcmp(t.value, s) == 0;
}
// Decimal digits of v at p (as memcached's itoa_u64); returns the end.
char* put_u64(char* p, uint64_t v) {
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = tmp[--n];
  return p;
}
constexpr const char* kBadFormat = "CLIENT_ERROR bad command line format";
}  // namespace

std::string_view first_get_key(const uint8_t* udp, uint32_t len) {
  if (len < kUdpFrameHeader + 5 || udp[4] != 0 || udp[5] != 1) return {};
  const char* p = reinterpret_cast<const char*>(udp + kUdpFrameHeader);
  const char* end = reinterpret_cast<const char*>(udp + len);
  if (std::memcmp(p, "get ", 4) == 0)
    p += 4;
  else if (end - p > 5 && std::memcmp(p, "gets ", 5) == 0)
    p += 5;
  else
    return {};
  while (p < end && *p == ' ') ++p;
  const char* k = p;
  while (p < end && *p != ' ' && *p != '\r' && *p != '\n' && *p != '\0') ++p;
  return {k, size_t(p - k)};
}

Protocol::Protocol(Cache& cache, const ProtocolConfig& cfg)
    : cache_(cache), cfg_(cfg), window_(&cache) {}

void Protocol::out(const char* s) {
  if (std::strncmp(s, "CLIENT_ERROR", 12) == 0)
    ++c_.client_errors;
  else if (std::strncmp(s, "SERVER_ERROR", 12) == 0)
    ++c_.server_errors;
  else if (std::strcmp(s, "ERROR") == 0)
    ++c_.errors;
  window_.out_string(s, noreply_);
  noreply_ = false;
}

bool Protocol::set_noreply_maybe(size_t ntokens) {
  const Token& t = tokens_[ntokens - 2];
  if (t.value && std::strcmp(t.value, "noreply") == 0) noreply_ = true;
  return noreply_;
}

int64_t Protocol::expiry(int32_t exptime) const {
  // memcached's realtime(EXPTIME_TO_POSITIVE_TIME(exptime)), in absolute unix seconds:
  // negative -> already expired; up to 30 days -> relative; more -> an absolute time.
  const int64_t e = exptime < 0 ? kRealtimeMaxDelta + 1 : exptime;
  if (e == 0) return 0;
  return e > kRealtimeMaxDelta ? e : now_ / kSecond + e;
}

void Protocol::run(char* buf, size_t len, uint16_t request_id, Nanos now, bool zero_copy,
                   DatagramSink& sink) {
  ++c_.requests;
  now_ = now;
  zero_copy_ = zero_copy;
  noreply_ = false;
  auto flush = [&] {
    window_.flush(request_id, sink);
    cache_.end_reply();
  };
  int nreqs = kReqsPerEvent;
  for (size_t pos = 0; pos < len;) {
    char* const start = buf + pos;
    const size_t rem = len - pos;
    char* el = static_cast<char*>(std::memchr(start, '\n', rem));
    if (!el) {
      if (rem > kLongLine) {  // memcached closes the "connection" unless this starts a get
        const char* p = start;
        while (p < buf + len && *p == ' ') ++p;
        const size_t left = size_t(buf + len - p);
        const bool get = (left >= 4 && std::memcmp(p, "get ", 4) == 0) ||
                         (left >= 5 && std::memcmp(p, "gets ", 5) == 0);
        if (p - start > 100 || !get) {
          ++c_.ignored;
          window_.cull();
          cache_.end_reply();
          return;
        }
      }
      ++c_.ignored;  // memcached would wait for the rest of the line: it never comes
      break;
    }
    char* const cont = el + 1;
    if (el - start > 1 && el[-1] == '\r') --el;
    *el = '\0';
    ++c_.commands;
    const Step s = command(start, cont, size_t(buf + len - cont));
    pos = size_t(cont - buf) + s.data;
    if (s.next == Next::kClose) {
      ++c_.ignored;
      window_.cull();
      cache_.end_reply();
      return;
    }
    if (s.next == Next::kQuit) break;
    if (s.next == Next::kDrop) break;
    if (s.next == Next::kFlush) flush();
    if (--nreqs < 0) {  // memcached writes out after reqs_per_event + 1 commands
      flush();
      nreqs = kReqsPerEvent - 1;
    }
  }
  flush();
}

Protocol::Step Protocol::command(char* line, char* rest, size_t avail) {
  window_.start();
  const size_t ntokens = tokenize_command(line, tokens_, kMaxTokens);
  const Token* t = tokens_;
  if (ntokens < 2 || t[0].length < 2) {
    out("ERROR");
    return {};
  }
  const char first = t[0].value[0];
  // The branches below follow memcached's process_command_ascii; commands nfpark does not
  // implement answer "ERROR" where memcached would run them.
  if (first == 'm' && t[0].length == 2) {  // meta commands
    out("ERROR");
    return {};
  }
  if (first == 'g') {
    if (ntokens < 3)
      out("ERROR");
    else if (is(t[0], "get"))
      return get(ntokens, false);
    else if (is(t[0], "gets"))
      return get(ntokens, true);
    else
      out("ERROR");  // gat, gats
    return {};
  }
  const bool storage6 = ntokens == 6 || ntokens == 7;
  if (first == 's' || first == 'a') {
    const bool set = first == 's' && is(t[0], "set"), add = first == 'a' && is(t[0], "add");
    if ((set || add) && storage6)
      return update(ntokens, set ? Cache::Mode::kSet : Cache::Mode::kAdd, rest, avail);
    out("ERROR");  // also stats, shutdown, slabs, append
    return {};
  }
  if (first == 'c') {
    if (is(t[0], "cas") && (ntokens == 7 || ntokens == 8))
      return update(ntokens, Cache::Mode::kCas, rest, avail);
    out("ERROR");  // also cache_memlimit
    return {};
  }
  if (first == 'd') {
    if (is(t[0], "delete") && ntokens >= 3 && ntokens <= 5) return remove(ntokens);
    out("ERROR");  // also decr
    return {};
  }
  if (first == 'i' || first == 't') {  // incr, touch
    out("ERROR");
    return {};
  }
  if (is(t[0], "replace")) {
    if (storage6) return update(ntokens, Cache::Mode::kReplace, rest, avail);
    out("ERROR");
    return {};
  }
  if (is(t[0], "bget")) {  // memcached's ancient alias of get
    if (ntokens < 3) {
      out("ERROR");
      return {};
    }
    return get(ntokens, false);
  }
  if (is(t[0], "version")) {
    std::string v = "VERSION " + cfg_.version;
    out(v.c_str());
    return {};
  }
  if (is(t[0], "quit")) return {Next::kQuit, 0};  // its response stays empty
  for (const char* known : {"prepend", "flush_all", "lru_crawler", "watch", "verbosity", "lru"}) {
    if (is(t[0], known)) {
      out("ERROR");
      return {};
    }
  }
  if (std::strncmp(t[ntokens - 2].value, "HTTP/", 5) == 0) return {Next::kClose, 0};
  out("ERROR");
  return {};
}

Protocol::Step Protocol::get(size_t ntokens, bool return_cas) {
  (void)ntokens;
  size_t k = 1;
  bool too_long = false;
  char line[kKeyMax + 64];
  do {
    while (tokens_[k].length != 0) {
      const Token& key = tokens_[k];
      if (key.length > kKeyMax) {
        too_long = true;
        break;
      }
      const Cache::Hit h = cache_.get({key.value, key.length}, now_, zero_copy_);
      if (h.found) {  // "VALUE <key> <flags> <bytes>[ <cas>]\r\n" then the data
        char* p = line;
        std::memcpy(p, "VALUE ", 6);
        p += 6;
        std::memcpy(p, key.value, key.length);
        p += key.length;
        *p++ = ' ';
        p = put_u64(p, h.flags);
        *p++ = ' ';
        p = put_u64(p, h.nbytes - 2);
        if (return_cas) {
          *p++ = ' ';
          p = put_u64(p, h.cas);
        }
        *p++ = '\r';
        *p++ = '\n';
        window_.text({line, size_t(p - line)});
        if (!h.hot.zero_copy) {
          window_.value(h.data, h.nbytes);
        } else {
          window_.hot(h.hot.data, h.hot.len, h.hot.room, h.hot.ref);
          if (h.hot.len < h.nbytes) window_.text("\r\n");  // not kept in the stable buffer
        }
      }
      ++k;
      if (tokens_[k].length != 0) window_.start();
    }
    if (too_long) break;
    if (tokens_[k].value != nullptr) {  // more than kMaxTokens - 2 keys: the next piece
      tokenize_command(tokens_[k].value, tokens_, kMaxTokens);
      k = 0;
      window_.start();
    }
  } while (tokens_[k].value != nullptr);
  if (too_long) {  // memcached kills every stacked response, then answers the error alone
    window_.cull();
    cache_.end_reply();
    window_.start();
    out(kBadFormat);
    return {};
  }
  window_.end_marker();
  return {Next::kFlush, 0};
}

Protocol::Step Protocol::update(size_t ntokens, Cache::Mode mode, char* rest, size_t avail) {
  set_noreply_maybe(ntokens);
  const Token* t = tokens_;
  if (t[1].length > kKeyMax) {
    out(kBadFormat);
    return {};
  }
  uint32_t flags = 0;
  int32_t exptime = 0, vlen = 0;
  uint64_t cas = 0;
  if (!(safe_strtoul(t[2].value, &flags) && safe_strtol(t[3].value, &exptime) &&
        safe_strtol(t[4].value, &vlen)) ||
      (mode == Cache::Mode::kCas && !safe_strtoull(t[5].value, &cas)) || vlen < 0 ||
      vlen > INT_MAX - 2) {
    out(kBadFormat);
    return {};
  }
  const std::string_view key(t[1].value, t[1].length);
  const size_t need = size_t(vlen) + 2;
  if (uint32_t(vlen) > cfg_.max_value) {
    out("SERVER_ERROR object too large for cache");
    if (mode == Cache::Mode::kSet) cache_.remove(key, now_, false);  // no stale value stays
    if (avail >= need) return {Next::kContinue, need};               // swallowed, as memcached does
    return {Next::kDrop, avail};
  }
  if (avail < need) {  // memcached would read the rest from the next datagram
    out("CLIENT_ERROR bad data chunk");
    return {Next::kDrop, avail};
  }
  if (rest[need - 2] != '\r' || rest[need - 1] != '\n') {
    out("CLIENT_ERROR bad data chunk");
    return {Next::kContinue, need};
  }
  const Cache::Result r =
      cache_.store(mode, key, flags, expiry(exptime), reinterpret_cast<const uint8_t*>(rest),
                   uint32_t(need), cas, now_);
  out(r == Cache::Result::kStored      ? "STORED"
      : r == Cache::Result::kNotStored ? "NOT_STORED"
      : r == Cache::Result::kExists    ? "EXISTS"
                                       : "NOT_FOUND");
  return {Next::kContinue, need};
}

Protocol::Step Protocol::remove(size_t ntokens) {
  const Token* t = tokens_;
  if (ntokens > 3) {
    const bool hold_is_zero = std::strcmp(t[2].value, "0") == 0;
    const bool sets_noreply = set_noreply_maybe(ntokens);
    const bool valid = (ntokens == 4 && (hold_is_zero || sets_noreply)) ||
                       (ntokens == 5 && hold_is_zero && sets_noreply);
    if (!valid) {
      out("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]");
      return {};
    }
  }
  if (t[1].length > kKeyMax) {
    out(kBadFormat);
    return {};
  }
  out(cache_.remove({t[1].value, t[1].length}, now_) ? "DELETED" : "NOT_FOUND");
  return {};
}

}  // namespace nfpark::kvs
