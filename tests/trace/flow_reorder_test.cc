// Reordering within flows (trace reorder's flow_* metrics) against hand-computed cases.
#include <gtest/gtest.h>

#include <vector>

#include "trace/reorder.h"

namespace nfpark::trace {
namespace {

// Interleaving two flows differently is reordering of the stream, not within any flow.
TEST(FlowReorder, StreamReorderingIsNotFlowReordering) {
  const std::vector<uint64_t> sent = {1, 2, 3, 4}, flows = {7, 8, 7, 8};
  ReorderStats r = compute_reorder(sent, {2, 1, 4, 3});
  compute_flow_reorder(sent, flows, {2, 1, 4, 3}, r);
  EXPECT_EQ(r.reordered, 2u);
  EXPECT_EQ(r.flows, 2u);
  EXPECT_EQ(r.flow_reordered, 0u);
  EXPECT_EQ(r.flow_out_of_order_pct, 0.0);
}

TEST(FlowReorder, SwapWithinAFlowCounts) {
  // Flow 7 is 1,3,5; it arrives 1,5,3: packet 3 is late by one within its flow.
  const std::vector<uint64_t> sent = {1, 2, 3, 4, 5}, flows = {7, 8, 7, 8, 7};
  ReorderStats r;
  compute_flow_reorder(sent, flows, {1, 2, 5, 4, 3}, r);
  EXPECT_EQ(r.flow_reordered, 1u);
  EXPECT_EQ(r.flow_extent_max, 1u);
  EXPECT_NEAR(r.flow_out_of_order_pct, 20.0, 1e-9);
}

}  // namespace
}  // namespace nfpark::trace
