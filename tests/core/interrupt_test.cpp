// Ctrl-C and SIGTERM only set the flag a job polls; a repeated SIGTERM (a cluster and a parent
// process both passing on a job's end) does not kill the process before it has saved its work.
#include <gtest/gtest.h>

#include <csignal>

#include "core/interrupt.hpp"

namespace labpose {
namespace {

TEST(Interrupt, SigtermSetsTheFlagAndARepeatedOneIsIgnored) {
  const InterruptHandler handler;
  EXPECT_FALSE(interrupt_requested());
  std::raise(SIGTERM);
  EXPECT_TRUE(interrupt_requested());
  EXPECT_STREQ(interrupt_reason(), "SIGTERM");
  std::raise(SIGTERM);  // would end the test program if it were not ignored
  std::raise(SIGTERM);
  EXPECT_TRUE(interrupt_requested());
}

TEST(Interrupt, TheFlagIsClearedWithItsHandler) {
  {
    const InterruptHandler handler;
    request_interrupt();
    EXPECT_STREQ(interrupt_reason(), "request");
  }
  const InterruptHandler next;
  EXPECT_FALSE(interrupt_requested());
}

}  // namespace
}  // namespace labpose
