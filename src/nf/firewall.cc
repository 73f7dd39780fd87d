#include "nf/firewall.h"

#include <toml++/toml.h>

#include <algorithm>

#include "nf/run_burst.h"

namespace nfpark::nf {

Firewall::Firewall(std::vector<AclRule> rules, AclAction default_action, uint32_t leaf_size)
    : rules_(std::move(rules)), default_action_(default_action) {
  deny_.reserve(rules_.size());
  for (const auto& r : rules_) deny_.push_back(r.action == AclAction::kDeny);
  AclClassifier::Options opt;
  opt.leaf_size = leaf_size;
  classifier_.build(rules_, opt);
}

std::unique_ptr<Firewall> Firewall::create(const FirewallConfig& cfg, std::string& error) {
  std::vector<AclRule> rules;
  if (!cfg.rules_file.empty()) {
    if (!load_acl_file(cfg.rules_file, rules, error)) return nullptr;
  } else {
    rules = generate_passing_rules(cfg.generated_rules, cfg.seed);
  }
  return std::make_unique<Firewall>(std::move(rules), cfg.default_action, cfg.leaf_size);
}

bool FirewallConfig::parse(const toml::table& t, FirewallConfig& out, std::string& error) {
  for (const auto& [k, v] : t) {
    std::string_view key = k.str();
    auto fail = [&](const char* what) {
      error = std::string(key) + ": " + what;
      return false;
    };
    if (key == "rules_file") {
      auto s = v.value<std::string>();
      if (!s) return fail("expected a path string");
      out.rules_file = *s;
    } else if (key == "generated_rules" || key == "leaf_size") {
      auto n = v.value<int64_t>();
      if (!n || *n < 0 || *n > 10'000'000) return fail("expected an integer in 0..10000000");
      (key == "leaf_size" ? out.leaf_size : out.generated_rules) = uint32_t(*n);
    } else if (key == "seed") {
      auto n = v.value<int64_t>();
      if (!n) return fail("expected an integer");
      out.seed = uint64_t(*n);
    } else if (key == "default_action") {
      auto s = v.value<std::string>();
      if (!s || (*s != "allow" && *s != "deny")) return fail("expected \"allow\" or \"deny\"");
      out.default_action = *s == "allow" ? AclAction::kAllow : AclAction::kDeny;
    } else {
      error = "unknown key '" + std::string(key) +
              "' (known: rules_file, generated_rules, seed, default_action, leaf_size)";
      return false;
    }
  }
  return true;
}

Firewall::Decision Firewall::decide(uint32_t rule) const {
  const bool matched = rule != AclClassifier::kNoMatch;
  return {matched ? deny_[rule] != 0 : default_action_ == AclAction::kDeny, matched};
}

void Firewall::account(Verdict& v, bool deny, bool matched) {
  ++rx_;
  defaulted_ += !matched;
  if (deny) {
    v = Verdict::kDrop;
    ++denied_;
  } else {
    ++allowed_;
  }
}

void Firewall::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos) {
  // Not finding runs for itself: every kProbeEvery bursts it asks for them again (saw_runs).
  if (!use_runs_ && ++bursts_without_runs_ >= kProbeEvery) use_runs_ = true;
  classify_packets(pkts, verdicts);
}

void Firewall::classify_packets(std::span<PacketView> pkts, std::span<Verdict> verdicts) {
  // The burst's keys are classified together (AclClassifier::classify_burst: staged, no
  // per-key branch, when the trees are shallow), then each packet gets its verdict.
  constexpr size_t kChunk = AclClassifier::kBurst;
  FlowKey keys[kChunk];
  uint32_t rule[kChunk];
  uint8_t at[kChunk];
  for (size_t base = 0; base < pkts.size(); base += kChunk) {
    const size_t n = std::min(kChunk, pkts.size() - base);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
      if (verdicts[base + i] != Verdict::kPass) continue;
      if (extract_flow_key(pkts[base + i].data, pkts[base + i].layout, keys[m])) {
        keys[m] = acl_key(keys[m]);
        at[m++] = uint8_t(i);
      } else {
        ++no_l3_;  // counted in no_l3, not default_action
        account(verdicts[base + i], default_action_ == AclAction::kDeny, true);
      }
    }
    classifier_.classify_burst(std::span<const FlowKey>(keys, m), rule);
    for (size_t j = 0; j < m; ++j) {
      const auto [deny, matched] = decide(rule[j]);
      account(verdicts[base + at[j]], deny, matched);
    }
  }
}

void Firewall::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                            const FlowRuns& runs, Nanos) {
  // One key per shared run with a live packet, classified together (classify_burst), then each
  // verdict given to its run's live packets; solo runs take the per-packet path.
  FlowKey keys[kBurst];
  uint32_t rule[kBurst];
  uint8_t run_of[kBurst];
  size_t m = 0, live = 0;
  for (size_t r = 0; r < runs.count; ++r) {
    const size_t b = runs.begin(r), e = runs.end(r);
    if (runs.solo[r]) {
      classify_packets(pkts.subspan(b, e - b), verdicts.subspan(b, e - b));
      continue;
    }
    size_t n = 0;
    for (size_t i = b; i < e; ++i) n += verdicts[i] == Verdict::kPass;
    if (n == 0) continue;
    live += n;
    keys[m] = acl_key(runs.keys[r]);
    run_of[m++] = uint8_t(r);
  }
  classifier_.classify_burst(std::span<const FlowKey>(keys, m), rule);
  for (size_t j = 0; j < m; ++j) {
    const auto [deny, matched] = decide(rule[j]);
    for (size_t i = runs.begin(run_of[j]); i < runs.end(run_of[j]); ++i)
      if (verdicts[i] == Verdict::kPass) account(verdicts[i], deny, matched);
  }
  saw_runs(live, m);
}

void Firewall::saw_runs(size_t live, size_t runs) {
  window_live_ += uint32_t(live);
  window_runs_ += uint32_t(runs);
  if (window_live_ < kWindow) return;
  // Runs worth finding: at least 1.5 live packets a run on average over the window.
  use_runs_ = 2 * uint64_t(window_live_) >= 3 * uint64_t(window_runs_);
  window_live_ = window_runs_ = 0;
  bursts_without_runs_ = 0;
}

void Firewall::export_state(std::vector<uint8_t>& out) const {
  for (uint64_t v : {rx_, allowed_, denied_, defaulted_, no_l3_}) put_state(out, v);
}

void Firewall::counters(const CounterSink& sink) const {
  sink("rx", rx_);
  sink("allowed", allowed_);
  sink("drop.denied", denied_);
  sink("default_action", defaulted_);
  sink("no_l3", no_l3_);
  sink("rules", rules_.size());
}

}  // namespace nfpark::nf
