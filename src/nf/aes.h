// Element:  Aes — AES header crypto: a 6-byte keyed flow fingerprint written into a MAC address
//           (QUEUE-MEM's "header encryptor that computes a 6 B fingerprint using AES"), or
//           format-preserving encryption/decryption of a header field with checksum updates.
// Ports:    in[0] headers -> out[0]                        diagram:  in0 --> [Aes] --> out0
// Config:   op fingerprint|encrypt|decrypt (default fingerprint) · field ip_addrs|l4_ports
//           (default ip_addrs; encrypt/decrypt) · target src_mac|dst_mac (default src_mac;
//           fingerprint) · key: 32 or 64 hex digits = AES-128/256 (default the FIPS-197 test
//           key 000102...0f — INSECURE, for tests and benchmarks only)
// Time:     none.                             State: one EVP context (key schedule), static.
// Counters: rx, done, skipped (no such field: non-IP, or no ports), evp_calls
// Cost:     1 EVP call per burst and round (AES-NI); fingerprint ~14 ns/pkt over forward
//           (nf_bench --quick, 100k flows).
// Refs:     QUEUE-MEM (seeds/004) Fig. 8 "lb + AES" chain; FIPS-197; RFC 1624.
//
// Theory of operation. All AES use is the forward cipher in ECB mode over blocks gathered from
// the whole burst — one EVP_EncryptUpdate per round per burst, not per packet.
//  * fingerprint = first 6 bytes of a fixed-length CBC-MAC under the key over the 5-tuple:
//    IPv4: one block [4, proto, sport, dport, src, dst, 0…]; IPv6: three blocks [6, proto,
//    sport, dport, 0…], src, dst. (Fixed-length CBC-MAC is a PRF; ICMP uses its echo id as both
//    ports, like FlowKey.) Written over the chosen MAC address; no checksum covers it.
//  * encrypt/decrypt = a 2-round Feistel network over the field's two halves (src|dst address,
//    or sport|dport) with round function F_r(X) = AES_K(X ‖ tweak ⊕ tag_r), truncated to the half:
//    encrypt L ^= F_1(R); R ^= F_2(L) — decrypt undoes it in reverse order, so decrypt(encrypt(x))
//    = x exactly and the field keeps its size and format. The ports' tweak is the protocol and the
//    (folded) addresses; the addresses' tweak is empty so every fragment of a packet maps alike.
//    Deterministic (equal fields encrypt equally, as flow-based NFs downstream need); a 2-round
//    Feistel is an obfuscation, not a proven FPE such as NIST FF1. IPv4 header and TCP/UDP/ICMPv6
//    checksums are patched incrementally (RFC 1624); a zero UDP/IPv4 checksum stays zero.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "nf/nf.h"
#include "nf/toml_fwd.h"


namespace nfpark::nf {

struct AesConfig {
  enum class Op : uint8_t { kFingerprint, kEncrypt, kDecrypt } op = Op::kFingerprint;
  enum class Field : uint8_t { kIpAddrs, kL4Ports } field = Field::kIpAddrs;
  enum class Target : uint8_t { kSrcMac, kDstMac } target = Target::kSrcMac;
  std::string key_hex = "000102030405060708090a0b0c0d0e0f";  // FIPS-197 C.1: insecure default

  static bool parse(const toml::table& t, AesConfig& out, std::string& error);
};

class Aes final : public Nf {
 public:
  static std::unique_ptr<Aes> create(const AesConfig& cfg, std::string& error);
  ~Aes() override;
  std::string_view name() const override { return "aes"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void counters(const CounterSink& sink) const override;
  // ECB-encrypts n blocks of 16 bytes in one EVP call (in may equal out).
  void encrypt_blocks(const uint8_t* in, uint8_t* out, size_t n);

 private:
  using Block = std::array<uint8_t, 16>;
  Aes() = default;
  void fingerprint(std::span<PacketView> pkts, std::span<Verdict> verdicts);
  void crypt_field(std::span<PacketView> pkts, std::span<Verdict> verdicts);
  // Feistel round: half `dst` ^= F_round(half `src`) for the packets in idx_[0..n).
  void feistel_round(std::span<PacketView> pkts, size_t n, int round, bool left_from_right);

  AesConfig cfg_;
  void* ctx_ = nullptr;  // EVP_CIPHER_CTX
  std::array<Block, 3 * kBurst> in_{}, out_{};
  std::array<uint16_t, kBurst> idx_{};
  std::array<std::array<uint8_t, 32>, kBurst> old_{};
  uint64_t rx_ = 0, done_ = 0, skipped_ = 0, evp_calls_ = 0;
};

}  // namespace nfpark::nf
