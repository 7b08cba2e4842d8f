// text_table(): rows lined up in columns for the console.
#include "core/text_table.hpp"

#include <gtest/gtest.h>

namespace labpose {
namespace {

TEST(TextTable, ColumnsAreAsWideAsTheirWidestCellWithTwoSpacesBetween) {
  EXPECT_EQ(text_table({{"bodypart", "test px"}, {"snout", "2.15"}, {"tailbase", "12.40"}}),
            "bodypart  test px\n"
            "snout     2.15\n"
            "tailbase  12.40\n");
}

TEST(TextTable, NoTrailingSpacesWhenTheLastCellsAreEmptyOrRowsAreShort) {
  EXPECT_EQ(text_table({{"trial", "val px", "state"}, {"3", "", ""}, {"12"}}),
            "trial  val px  state\n"
            "3\n"
            "12\n");
  EXPECT_EQ(text_table({{"a", "", "c"}}), "a    c\n");
}

TEST(TextTable, NoRowsIsNoText) {
  EXPECT_EQ(text_table({}), "");
}

}  // namespace
}  // namespace labpose
