// Pickles read back by Python's own pickle module.
#include <gtest/gtest.h>

#include "projects/pickle.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {

TEST(Pickle, PythonLoadsEveryKindOfValue) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::TempDir dir;
  const PyValue value = PyValue::dict({
      {"data",
       PyValue::dict({{"start", 1700000000.5},
                      {"nframes", std::int64_t{2330}},
                      {"big", std::int64_t{1} << 40},
                      {"negative", -7},
                      {"cropping", false},
                      {"done", true},
                      {"nothing", PyValue()},
                      {"frame_dimensions", PyValue::tuple({480, 640})},
                      {"empty tuple", PyValue::tuple({})},
                      {"names", PyValue::List{"snout", "left ear", "ünïcode"}},
                      {"empty", PyValue::List{}},
                      {"nested", PyValue::List{PyValue::List{1, 2.5}, PyValue::dict({})}}})},
  });
  testing::write_text(dir / "value.pickle", pickle(value));
  const auto result = testing::run(testing::shell_quote(python) +
                                   " -c \"import pickle; print(repr(pickle.load(open('" +
                                   (dir / "value.pickle").string() + "', 'rb'))))\"");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "{'data': {'start': 1700000000.5, 'nframes': 2330, 'big': 1099511627776, 'negative': "
            "-7, 'cropping': "
            "False, 'done': True, 'nothing': None, 'frame_dimensions': (480, 640), 'empty tuple': "
            "(), 'names': "
            "['snout', 'left ear', 'ünïcode'], 'empty': [], 'nested': [[1, 2.5], {}]}}\n");
}

}  // namespace
}  // namespace labpose::projects
