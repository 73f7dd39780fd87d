#include "nf/aes.h"

#include <openssl/evp.h>
#include <toml++/toml.h>

#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"

namespace nfpark::nf {

static bool parse_key(const std::string& hex, std::vector<uint8_t>& key, std::string& error) {
  if (hex.size() != 32 && hex.size() != 64) {
    error =
        "key: expected 32 (AES-128) or 64 (AES-256) hex digits, got " + std::to_string(hex.size());
    return false;
  }
  key.clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nib = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      error = "key: '" + hex.substr(i, 2) + "' is not a hex byte";
      return false;
    }
    key.push_back(uint8_t(hi << 4 | lo));
  }
  return true;
}

bool AesConfig::parse(const toml::table& t, AesConfig& out, std::string& error) {
  for (const auto& [k, v] : t) {
    std::string_view key = k.str();
    auto s = v.value<std::string>();
    auto fail = [&](const char* what) {
      error = std::string(key) + ": " + what;
      return false;
    };
    if (!s) return fail("expected a string");
    if (key == "op") {
      if (*s == "fingerprint")
        out.op = Op::kFingerprint;
      else if (*s == "encrypt")
        out.op = Op::kEncrypt;
      else if (*s == "decrypt")
        out.op = Op::kDecrypt;
      else
        return fail("expected fingerprint, encrypt or decrypt");
    } else if (key == "field") {
      if (*s == "ip_addrs")
        out.field = Field::kIpAddrs;
      else if (*s == "l4_ports")
        out.field = Field::kL4Ports;
      else
        return fail("expected ip_addrs or l4_ports");
    } else if (key == "target") {
      if (*s == "src_mac")
        out.target = Target::kSrcMac;
      else if (*s == "dst_mac")
        out.target = Target::kDstMac;
      else
        return fail("expected src_mac or dst_mac");
    } else if (key == "key") {
      std::vector<uint8_t> bytes;
      if (!parse_key(*s, bytes, error)) return false;
      out.key_hex = *s;
    } else {
      error = "unknown key '" + std::string(key) + "' (known: op, field, target, key)";
      return false;
    }
  }
  return true;
}

std::unique_ptr<Aes> Aes::create(const AesConfig& cfg, std::string& error) {
  std::vector<uint8_t> key;
  if (!parse_key(cfg.key_hex, key, error)) return nullptr;
  std::unique_ptr<Aes> a(new Aes());
  a->cfg_ = cfg;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  a->ctx_ = ctx;
  if (!ctx || EVP_EncryptInit_ex(ctx, key.size() == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb(),
                                 nullptr, key.data(), nullptr) != 1) {
    error = "OpenSSL could not set up AES-ECB";
    return nullptr;
  }
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  return a;
}

Aes::~Aes() {
  EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(ctx_));
}

void Aes::encrypt_blocks(const uint8_t* in, uint8_t* out, size_t n) {
  if (n == 0) return;
  int outl = 0;
  EVP_EncryptUpdate(static_cast<EVP_CIPHER_CTX*>(ctx_), out, &outl, in, int(n * 16));
  ++evp_calls_;
}

void Aes::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos) {
  if (cfg_.op == AesConfig::Op::kFingerprint)
    fingerprint(pkts, verdicts);
  else
    crypt_field(pkts, verdicts);
}

void Aes::fingerprint(std::span<PacketView> pkts, std::span<Verdict> verdicts) {
  size_t n = 0;
  std::array<FlowKey, kBurst> keys;
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    ++rx_;
    FlowKey& k = keys[n];
    if (!extract_flow_key(pkts[i].data, pkts[i].layout, k)) {
      ++skipped_;
      continue;
    }
    Block& b = in_[n];
    b.fill(0);
    b[0] = k.ip_version, b[1] = k.proto;
    store_be16(b.data() + 2, k.sport), store_be16(b.data() + 4, k.dport);
    if (k.ip_version == 4)
      std::memcpy(b.data() + 6, k.src.data() + 12, 4),
          std::memcpy(b.data() + 10, k.dst.data() + 12, 4);
    idx_[n++] = uint16_t(i);
  }
  encrypt_blocks(in_[0].data(), out_[0].data(), n);
  // IPv6: two more CBC-MAC steps over src and dst, batched over the burst's IPv6 packets.
  for (int step = 0; step < 2; ++step) {
    size_t m = 0;
    std::array<uint16_t, kBurst> v6;
    for (size_t j = 0; j < n; ++j) {
      if (keys[j].ip_version != 6) continue;
      const auto& addr = step == 0 ? keys[j].src : keys[j].dst;
      for (int x = 0; x < 16; ++x) in_[m][size_t(x)] = out_[j][size_t(x)] ^ addr[size_t(x)];
      v6[m++] = uint16_t(j);
    }
    if (m == 0) break;
    encrypt_blocks(in_[0].data(), in_[0].data(), m);
    for (size_t q = 0; q < m; ++q) out_[v6[q]] = in_[q];
  }
  const size_t mac_off = cfg_.target == AesConfig::Target::kSrcMac ? 6 : 0;
  for (size_t j = 0; j < n; ++j) std::memcpy(pkts[idx_[j]].data + mac_off, out_[j].data(), 6);
  done_ += n;
}

// The field as two adjacent halves [p, p + half) and [p + half, p + 2 half).
static uint8_t* field_of(const PacketView& p, AesConfig::Field f, size_t& half) {
  const PacketLayout& L = p.layout;
  if (!L.ok() || L.ip_version == 0) return nullptr;
  if (f == AesConfig::Field::kL4Ports) {
    if (!L.has_ports()) return nullptr;
    half = 2;
    return p.data + L.l4_off;
  }
  half = L.ip_version == 4 ? 4 : 16;
  return p.data + L.l3_off + (L.ip_version == 4 ? 12 : 8);
}

void Aes::feistel_round(std::span<PacketView> pkts, size_t n, int round, bool left_from_right) {
  for (size_t j = 0; j < n; ++j) {
    const PacketView& p = pkts[idx_[j]];
    size_t half = 0;
    uint8_t* f = field_of(p, cfg_.field, half);
    Block& b = in_[j];
    b.fill(0);
    std::memcpy(b.data(), left_from_right ? f + half : f, half);
    if (cfg_.field == AesConfig::Field::kL4Ports) {  // tweak: protocol and folded addresses
      const uint8_t* ip = p.data + p.layout.l3_off;
      b[2] = p.layout.l4_proto;
      const size_t alen = p.layout.ip_version == 4 ? 4 : 16,
                   aoff = p.layout.ip_version == 4 ? 12 : 8;
      for (size_t x = 0; x < alen; ++x)
        b[3 + x % 4] ^= ip[aoff + x], b[7 + x % 4] ^= ip[aoff + alen + x];
    }
    b[13] ^= p.layout.ip_version;
    b[14] ^= uint8_t(1 + int(cfg_.field));
    b[15] ^= uint8_t(round);
  }
  encrypt_blocks(in_[0].data(), out_[0].data(), n);
  for (size_t j = 0; j < n; ++j) {
    size_t half = 0;
    uint8_t* f = field_of(pkts[idx_[j]], cfg_.field, half);
    uint8_t* dst = left_from_right ? f : f + half;
    for (size_t x = 0; x < half; ++x) dst[x] ^= out_[j][x];
  }
}

void Aes::crypt_field(std::span<PacketView> pkts, std::span<Verdict> verdicts) {
  size_t n = 0;
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    ++rx_;
    size_t half = 0;
    uint8_t* f = field_of(pkts[i], cfg_.field, half);
    if (!f) {
      ++skipped_;
      continue;
    }
    std::memcpy(old_[n].data(), f, 2 * half);
    idx_[n++] = uint16_t(i);
  }
  if (n == 0) return;
  if (cfg_.op == AesConfig::Op::kEncrypt) {
    feistel_round(pkts, n, 1, true);   // L ^= F1(R)
    feistel_round(pkts, n, 2, false);  // R ^= F2(L)
  } else {
    feistel_round(pkts, n, 2, false);
    feistel_round(pkts, n, 1, true);
  }
  for (size_t j = 0; j < n; ++j) {  // RFC 1624 checksum patches
    PacketView& p = pkts[idx_[j]];
    const PacketLayout& L = p.layout;
    size_t half = 0;
    uint8_t* f = field_of(p, cfg_.field, half);
    const uint32_t len = uint32_t(2 * half);
    if (cfg_.field == AesConfig::Field::kIpAddrs && L.ip_version == 4) {
      uint8_t* ip = p.data + L.l3_off;
      store_be16(ip + 10, csum_update_bytes(load_be16(ip + 10), old_[j].data(), f, len));
    }
    if (!L.l4_off) continue;
    uint8_t* l4 = p.data + L.l4_off;
    uint8_t* ck = L.is_tcp()   ? l4 + 16
                  : L.is_udp() ? l4 + 6
                  : (L.l4_proto == proto::kIcmpV6 && cfg_.field == AesConfig::Field::kIpAddrs)
                      ? l4 + 2
                      : nullptr;
    if (!ck || (L.is_udp() && L.ip_version == 4 && load_be16(ck) == 0)) continue;
    uint16_t v = csum_update_bytes(load_be16(ck), old_[j].data(), f, len);
    store_be16(ck, L.is_udp() && v == 0 ? 0xFFFF : v);
  }
  done_ += n;
}

void Aes::counters(const CounterSink& sink) const {
  sink("rx", rx_);
  sink("done", done_);
  sink("skipped", skipped_);
  sink("evp_calls", evp_calls_);
}

}  // namespace nfpark::nf
