// run/nf_assembly.h: the NF server every role and the simulator build from the run config —
// the tag format follows the mode (QUEUE-MEM's is nfpark's whatever [park] format says),
// Reframer comes from --reframe and the budget, a switch with an external NF builds a
// forwarder, and a chain that cannot be built is one error naming the file.
#include "run/nf_assembly.h"

#include <gtest/gtest.h>

namespace nfpark::run {
namespace {

// A BufferOps that is never called: the assembly only instantiates the step.
struct NoBuffer {
  using Handle = uint8_t*;
  struct Lent {};
  static Handle null() { return nullptr; }
  static uint8_t* data(Handle h) { return h; }
  static uint32_t head_len(Handle) { return 0; }
  static uint32_t pkt_len(Handle) { return 0; }
  static uint32_t cut_len(Handle) { return 0; }
  static Handle make_header(Handle, uint32_t, uint32_t, uint32_t, uint32_t, Lent*) {
    return nullptr;
  }
  static uint8_t* open_gap(Handle, uint32_t, uint32_t) { return nullptr; }
  static void close_gap(Handle, uint32_t, uint32_t) {}
  static park::Rejoin rejoin(Handle, uint32_t, Lent&, Handle, uint32_t) {
    return park::Rejoin::kNoRoom;
  }
  static bool carries(Handle, Handle) { return false; }
  static void trim(Handle, uint32_t) {}
  static void free(Handle) {}
};

TEST(NfAssembly, TagFormatFollowsTheMode) {
  using park::TagFormat;
  EXPECT_EQ(nf_tag_format(Mode::kPayloadPark, TagFormat::kPayloadPark), TagFormat::kPayloadPark);
  EXPECT_EQ(nf_tag_format(Mode::kPayloadPark, TagFormat::kNfpark), TagFormat::kNfpark);
  EXPECT_EQ(nf_tag_format(Mode::kQueueMem, TagFormat::kPayloadPark), TagFormat::kNfpark)
      << "QUEUE-MEM writes only nfpark tags";
  for (Mode m : {Mode::kBaseline, Mode::kNfSlicer, Mode::kNicmem, Mode::kSplit})
    EXPECT_FALSE(nf_tag_format(m, TagFormat::kNfpark)) << to_string(m);
}

TEST(NfAssembly, FaultsFindTheModesTag) {
  using park::TagFormat;
  using park::TagShape;
  EXPECT_EQ(nf_tag_shape(Mode::kQueueMem, TagFormat::kPayloadPark).kind, TagShape::kNfpark);
  EXPECT_EQ(nf_tag_shape(Mode::kPayloadPark, TagFormat::kPayloadPark).kind,
            TagShape::kPayloadPark);
  EXPECT_EQ(nf_tag_shape(Mode::kNfSlicer, TagFormat::kNfpark).kind, TagShape::kSlicerToken);
  EXPECT_EQ(nf_tag_shape(Mode::kNicmem, TagFormat::kNfpark).kind, TagShape::kNone);
}

TEST(NfAssembly, SpecFromTheRunConfig) {
  RunConfig c;
  c.mode = Mode::kNfSlicer;
  c.notify_drops = false;
  c.faults.drop = 0.5;
  std::string err;
  NfServerSpec s = nf_server_spec(c, Budget{}, true, err);
  EXPECT_EQ(err, "");
  EXPECT_TRUE(s.slicer);
  EXPECT_FALSE(s.notify);
  EXPECT_TRUE(s.trace_time);
  EXPECT_FALSE(s.reframe) << "no Reframer without --reframe";
  EXPECT_EQ(s.faults.drop, 0.5);

  c.reframe_us = 20;
  Budget b = plan_memory(c, 0);
  ASSERT_GT(b.reframe_hold, 0u);
  s = nf_server_spec(c, b, false, err);
  ASSERT_TRUE(s.reframe);
  EXPECT_EQ(s.reframe->t_buff, 20 * kMicro);
  EXPECT_EQ(s.reframe->max_held_packets, b.reframe_hold);
  EXPECT_FALSE(s.trace_time);
}

TEST(NfAssembly, TheNfRoleSizesItsPoolForReframer) {
  RunConfig c;
  c.role = Role::kNf;
  const uint32_t without = plan_memory(c, 0).pool_mbufs;
  c.reframe_us = 20;
  const Budget b = plan_memory(c, 0);
  EXPECT_EQ(b.pool_mbufs, without + b.reframe_hold);
}

TEST(NfAssembly, BuildsTheStepWithReframerAndTheChain) {
  RunConfig c;
  c.chain = "counter";
  c.reframe_us = 20;
  std::string err;
  const NfServerSpec s = nf_server_spec(c, plan_memory(c, 0), true, err);
  auto step = build_nf_step<NoBuffer>(c, s, err);
  ASSERT_TRUE(step) << err;
  EXPECT_TRUE(step->reframer());
  EXPECT_TRUE(step->trace_time());
  int counters = 0;
  step->chain().counters(
      [&](std::string_view k, uint64_t) { counters += k.starts_with("counter."); });
  EXPECT_GT(counters, 0);

  c.role = Role::kSwitch;  // the NF server is another process: a forwarder here
  step = build_nf_step<NoBuffer>(c, s, err);
  ASSERT_TRUE(step) << err;
  counters = 0;
  step->chain().counters(
      [&](std::string_view k, uint64_t) { counters += k.starts_with("counter."); });
  EXPECT_EQ(counters, 0);

  c.role = Role::kAll;
  c.chain = "no_such_nf";
  c.source = "x.toml";
  EXPECT_FALSE(build_nf_step<NoBuffer>(c, s, err));
  EXPECT_TRUE(err.starts_with("x.toml: ")) << err;
}

}  // namespace
}  // namespace nfpark::run
