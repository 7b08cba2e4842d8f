// labpose::Error: message, hint, kind and exit codes as the CLI reports them.
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace labpose {
namespace {

TEST(Error, CarriesMessageHintAndExitCode) {
  const Error failure("config.yaml:7:12: bodyparts must be a list", "write one name per line");
  EXPECT_STREQ(failure.what(), "config.yaml:7:12: bodyparts must be a list");
  EXPECT_EQ(failure.hint(), "write one name per line");
  EXPECT_EQ(failure.exit_code(), 1);
  EXPECT_EQ(UsageError("bad flag").exit_code(), 2);
  EXPECT_EQ(Error("stopped", "run it again", ErrorKind::interrupted).exit_code(), 3);
}

TEST(Error, AssertThrowsAnInternalErrorNotAbort) {
  const int value = 3;
  try {
    LABPOSE_ASSERT(value == 4);
    FAIL() << "LABPOSE_ASSERT did not throw";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("internal error: `value == 4`"), std::string::npos)
        << error.what();
    EXPECT_NE(error.hint().find("bug in labpose"), std::string::npos);
  }
  EXPECT_NO_THROW(LABPOSE_ASSERT(value == 3));
}

}  // namespace
}  // namespace labpose
