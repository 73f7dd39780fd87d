// Element:  Firewall — 5-tuple ACL, first match wins; deny drops, allow passes.
// Ports:    in[0] headers -> out[0] allowed                diagram:  in0 --> [Firewall] --> out0
// Config:   rules_file (default "": generate rules) · generated_rules (default 10000) ·
//           seed (default 1) · default_action allow|deny (default allow) · leaf_size (default 16)
// Time:     none.                           State: AclClassifier built once from the rules.
// Counters: rx, allowed, drop.denied, default_action (packets that matched no rule),
//           no_l3 (non-IP/malformed: given the default action), rules
// Cost:     acl_bench: 6 ns/lookup at 10k generated rules for generated traffic (linear
//           scan: 20 us), 30–80 ns for IPv4 keys aimed inside dense rule sets (1k–20k rules;
//           was 80–330 before the SIMD leaves); nf_bench --quick: ~31 ns/pkt over forward incl.
//           key extraction at 1000 rules.
// Bursts:   process() classifies the burst's keys together (AclClassifier::classify_burst).
// Runs:     one classification per run of a flow (run_burst.h), the runs' keys classified
//           together (classify_burst), each verdict given to its run. Self-bypass: the firewall
//           finds runs for itself (finds_runs()) only while the runs it saw averaged at least
//           kRunsWorth (1.5) live packets; below that the chain's run detection (key compare,
//           hash per run) costs more than the classifications it saves, so bursts go through
//           process() and every kProbeEvery (128) such bursts the firewall asks for runs again
//           to measure them. Either path gives the same verdicts and counters (the firewall
//           keeps no per-flow state), so the switch changes cost only.
// Refs:     Qi et al., HyperSplit (INFOCOM 2009); Vamanan et al., EffiCuts (SIGCOMM 2010).
//
// Theory of operation. Rules come from `rules_file` (format in acl_rule.h and docs/nfs.md) or,
// when none is given, from generate_passing_rules(): deny rules over source space generated
// traffic never uses (240.0.0.0/4, 100::/64), so the default chain passes all traffic while
// paying for a full-size classification. A packet's key is its 5-tuple (ports 0 unless TCP/UDP);
// non-first IPv4/IPv6 fragments have no ports and are classified with ports 0.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nf/acl_classifier.h"
#include "nf/acl_rule.h"
#include "nf/nf.h"
#include "nf/toml_fwd.h"

namespace nfpark::nf {

struct FirewallConfig {
  std::string rules_file;  // empty: generated rules
  uint32_t generated_rules = 10000;
  uint64_t seed = 1;
  AclAction default_action = AclAction::kAllow;
  uint32_t leaf_size = 16;

  static bool parse(const toml::table& t, FirewallConfig& out, std::string& error);
};

class Firewall final : public Nf {
 public:
  static constexpr uint32_t kProbeEvery = 128;  // bursts through process() between probes
  static constexpr uint32_t kWindow = 128;      // live packets in shared runs per decision
  static std::unique_ptr<Firewall> create(const FirewallConfig& cfg, std::string& error);
  // With explicit rules (tests, benches).
  Firewall(std::vector<AclRule> rules, AclAction default_action, uint32_t leaf_size = 16);
  std::string_view name() const override { return "firewall"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts, const FlowRuns& runs,
                    Nanos now) override;
  bool run_aware() const override { return true; }
  // Runs pay for themselves from ~1.5 packets a run (see "Runs" above; nf_bench --runs).
  bool finds_runs() const override { return use_runs_; }
  bool rewrites_flow_key() const override { return false; }
  void counters(const CounterSink& sink) const override;
  void export_state(std::vector<uint8_t>& out) const override;
  const AclClassifier& classifier() const { return classifier_; }
  const std::vector<AclRule>& rules() const { return rules_; }

 private:
  // What the classifier's `rule` (AclClassifier::kNoMatch: none) says: deny? `matched` is
  // false for the default action.
  struct Decision {
    bool deny, matched;
  };
  Decision decide(uint32_t rule) const;
  void account(Verdict& v, bool deny, bool matched);
  // process() without the self-bypass's bookkeeping (also what a solo run gets).
  void classify_packets(std::span<PacketView> pkts, std::span<Verdict> verdicts);
  // The self-bypass: `live` packets in `runs` shared runs seen by process_runs().
  void saw_runs(size_t live, size_t runs);

  std::vector<AclRule> rules_;
  std::vector<uint8_t> deny_;  // per rule: 1 = deny
  AclClassifier classifier_;
  AclAction default_action_;
  uint64_t rx_ = 0, allowed_ = 0, denied_ = 0, defaulted_ = 0, no_l3_ = 0;
  bool use_runs_ = true;      // finds_runs(): the chain finds runs for the firewall
  uint32_t window_live_ = 0;  // live packets in shared runs since the last decision
  uint32_t window_runs_ = 0;  // shared runs with a live packet since then
  uint32_t bursts_without_runs_ = 0;
};

}  // namespace nfpark::nf
