// learning_stats.csv: the text training writes (header, number formats, an empty test error) and
// reading it back, including the message for a damaged line.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/training/learning_stats.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
using testing::TempDir;

TEST(LearningStats, WritesTheFormatAndReadsItBack) {
  const TempDir dir;
  const auto file = dir.path() / "learning_stats.csv";
  std::vector<LearningStatsRow> rows(2);
  rows[0].iteration = 100;
  rows[0].loss = 0.0123456789;
  rows[0].learning_rate = 0.001;
  rows[0].seconds = 12.34;
  rows[1].iteration = 200;
  rows[1].loss = 0.5;
  rows[1].learning_rate = 1e-4;
  rows[1].test_error = 3.25;
  rows[1].seconds = 25.0;
  write_learning_stats(file, rows);
  EXPECT_EQ(testing::read_text(file),
            "iteration,loss,lr,test_error,seconds\n"
            "100,0.0123457,0.001,,12.3\n"
            "200,0.5,0.0001,3.250,25.0\n");

  const auto read = read_learning_stats(file);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].iteration, 100);
  EXPECT_DOUBLE_EQ(read[0].loss, 0.0123457);
  EXPECT_DOUBLE_EQ(read[0].learning_rate, 0.001);
  EXPECT_FALSE(read[0].test_error.has_value());
  EXPECT_DOUBLE_EQ(read[0].seconds, 12.3);
  EXPECT_EQ(read[1].iteration, 200);
  ASSERT_TRUE(read[1].test_error.has_value());
  EXPECT_DOUBLE_EQ(*read[1].test_error, 3.25);

  write_learning_stats(file, {});
  EXPECT_TRUE(read_learning_stats(file).empty()) << "the header alone: no rows";
}

TEST(LearningStats, DamagedLinesAreNamed) {
  const TempDir dir;
  const auto file = dir.path() / "learning_stats.csv";
  testing::write_text(file, "iteration,loss,lr,test_error,seconds\n10,0.5,0.001,,1.0\n20,0.4\n");
  try {
    read_learning_stats(file);
    FAIL() << "a row of two fields is refused";
  } catch (const Error& error) {
    EXPECT_TRUE(testing::contains(error.what(), file.string() + ":3: not a learning_stats.csv row"))
        << error.what();
    EXPECT_TRUE(testing::contains(error.hint(), "iteration,loss,lr,test_error,seconds"));
  }
}

}  // namespace
}  // namespace labpose::pipeline
