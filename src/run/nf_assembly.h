// NfAssembly: the NF server built from the run config, once for every role and engine —
// `nfpark run` (one process), `--role nf` (a process of its own) and the simulator. Decides
// the chain, the tag format per mode (PayloadPark: [park] format; QUEUE-MEM: always nfpark's
// 24 B tag; the others: none), drop notification, the NFSlicer token, Reframer (t_buff from
// --reframe, its hold from the memory budget), trace time (replaying a trace) and the faults
// the engine injects on the way back. No DPDK: the engines only adapt their packet handles.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "nf/registry.h"
#include "park/fault_injector.h"
#include "park/nf_burst.h"
#include "park/reframe_stage.h"
#include "park/tag.h"
#include "reframe/reorder_config.h"
#include "run/budget.h"
#include "run/run_config.h"

namespace nfpark::run {

// The tag the switch adds to what it sends the NF server in `mode` (nullopt: none).
std::optional<park::TagFormat> nf_tag_format(Mode mode, park::TagFormat park_format);
// Where that tag (or NFSlicer's token) is, for the fault injector's corruption and forging.
park::TagShape nf_tag_shape(Mode mode, park::TagFormat park_format);

struct NfServerSpec {
  std::optional<park::TagFormat> format;          // nf_tag_format
  bool notify = true;                             // [run] notify_drops
  bool slicer = false;                            // packets carry NFSlicer's token
  std::optional<reframe::ReorderConfig> reframe;  // Reframer in front of the chain
  reframe::BypassRules reframe_bypass;            // its bypass classes ([reframe] bypass_*)
  bool reframe_box = false;  // Reframer on an lcore of its own ([reframe] placement = "box"):
                             // build_nf_step leaves it out, build_reframe_stage makes it
  bool trace_time = false;   // the chain's clock is the trace's
  Faults faults;             // injected on the way back (engine's hook)
  park::TagShape shape;      // nf_tag_shape, for the faults
};

// The spec for a run of `cfg` with `budget`; `replay`: a trace is replayed (not live ports).
// Empty `err` on success; otherwise it names the setting.
NfServerSpec nf_server_spec(const RunConfig& cfg, const Budget& budget, bool replay,
                            std::string& err);

inline const std::string kForward = "forward";

// The shared burst step for `spec`, with the chain cfg names (its [nf.NAME] tables from the
// config). nullptr with `err` set (the file, the NF, the key) when the chain cannot be built.
template <park::BufferOps B>
std::unique_ptr<park::NfBurst<B>> build_nf_step(const RunConfig& cfg, const NfServerSpec& spec,
                                                std::string& err) {
  std::string cerr;
  // A switch whose NF server is another process builds none of its own: a forwarder.
  const std::string& name = cfg.role == Role::kSwitch ? kForward : cfg.chain;
  auto chain = nf::build_chain(name, cfg.nf_config.get(), cerr);
  if (!chain) {
    err = (cfg.source.empty() ? std::string() : cfg.source + ": ") + cerr;
    return nullptr;
  }
  chain->set_worker(cfg.worker, cfg.workers);  // its share (a NAT's ports): run/worker_config.h
  auto step =
      std::make_unique<park::NfBurst<B>>(std::move(chain), spec.format, spec.notify, spec.slicer);
  if (spec.reframe && !spec.reframe_box) step->set_reframer(*spec.reframe, spec.reframe_bypass);
  step->use_trace_time(spec.trace_time);
  return step;
}

// The Reframer box's stage for `spec` (nullptr unless spec.reframe_box): the same Reframer the
// in-chain placement puts into the step, for an engine to run on an lcore of its own.
template <park::BufferOps B>
std::unique_ptr<park::ReframeStage<B>> build_reframe_stage(const NfServerSpec& spec) {
  if (!spec.reframe || !spec.reframe_box) return nullptr;
  return std::make_unique<park::ReframeStage<B>>(*spec.reframe, spec.reframe_bypass);
}

}  // namespace nfpark::run
