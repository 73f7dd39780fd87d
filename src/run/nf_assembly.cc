#include "run/nf_assembly.h"

namespace nfpark::run {

std::optional<park::TagFormat> nf_tag_format(Mode mode, park::TagFormat park_format) {
  switch (mode) {
    case Mode::kPayloadPark:
      return park_format;
    case Mode::kQueueMem:
      return park::TagFormat::kNfpark;  // queue_mem.h writes only these
    default:
      return std::nullopt;
  }
}

park::TagShape nf_tag_shape(Mode mode, park::TagFormat park_format) {
  park::TagShape shape;
  if (mode == Mode::kNfSlicer) {
    shape.kind = park::TagShape::kSlicerToken;
  } else if (auto f = nf_tag_format(mode, park_format)) {
    shape.kind =
        *f == park::TagFormat::kNfpark ? park::TagShape::kNfpark : park::TagShape::kPayloadPark;
  }
  return shape;
}

NfServerSpec nf_server_spec(const RunConfig& cfg, const Budget& budget, bool replay,
                            std::string& err) {
  NfServerSpec s;
  s.format = nf_tag_format(cfg.mode, cfg.park.format);
  s.notify = cfg.notify_drops;
  s.slicer = cfg.mode == Mode::kNfSlicer;
  s.trace_time = replay;
  s.faults = cfg.faults;
  s.shape = nf_tag_shape(cfg.mode, cfg.park.format);
  if (budget.reframe_hold > 0) {
    reframe::ReorderConfig rc = cfg.reframe.cfg;  // [reframe] settings
    rc.t_buff = Nanos(cfg.reframe_us * 1000);
    rc.max_held_packets = budget.reframe_hold;
    if (std::string e = rc.validate(); !e.empty()) err = "reframe: " + e;
    s.reframe = rc;
    s.reframe_bypass.tcp_syn = cfg.reframe.bypass_syn;
    for (uint64_t d : cfg.reframe.bypass_dscp) s.reframe_bypass.dscp_mask |= uint64_t(1) << d;
    if (!cfg.reframe.bypass_match.empty())  // header match: [reframe] bypass_protocols, ...
      s.reframe_bypass.match = [m = cfg.reframe.bypass_match](const uint8_t* p,
                                                              const PacketLayout& l) {
        return m.match(p, l);
      };
    s.reframe_box = cfg.reframe.placement == Placement::kBox;
  }
  return s;
}

}  // namespace nfpark::run
