// RunResult's verdict: the exit code from how the run ended and whether its invariants held.
#include "run/run_result.h"

#include <gtest/gtest.h>

#include <csignal>

namespace nfpark::run {
namespace {

RunResult balanced() {
  RunResult r;
  r.packets_in = 10;
  r.packets_out = 8;
  r.switch_drops = 2;
  r.drops.values["abandoned_at_exit"] = 2;
  r.pools_full = true;
  return r;
}

TEST(Verdict, CompleteInterruptedBroken) {
  std::string why;
  RunResult r = balanced();
  EXPECT_EQ(r.verdict(why), kExitComplete);
  r.end = End::kSignal;
  r.signal = SIGINT;
  EXPECT_EQ(r.verdict(why), kExitInterrupted);
  EXPECT_NE(why.find("SIGINT"), std::string::npos);
  EXPECT_NE(why.find("2 packets in flight"), std::string::npos) << why;
  r.end = End::kTimeout;
  EXPECT_EQ(r.verdict(why), kExitInterrupted);  // a replay cut short by --timeout
  r.live = true;
  EXPECT_EQ(r.verdict(why), kExitComplete);  // a live run's timeout is its planned end
  r.packets_out = 7;
  EXPECT_EQ(r.verdict(why), kExitBroken);
  r = balanced();
  r.pools_full = false;
  EXPECT_EQ(r.verdict(why), kExitBroken);
}

TEST(Verdict, JsonSaysHowTheRunEnded) {
  RunResult r = balanced();
  r.end = End::kSignal;
  r.signal = SIGTERM;
  const std::string j = r.to_json();
  EXPECT_NE(j.find("\"status\": \"cut_short\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"end\": \"signal\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"signal\": \"SIGTERM\""), std::string::npos) << j;
}

}  // namespace
}  // namespace nfpark::run
