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

// numpy arrays as numpy pickles them (what DeepLabCut's multi-animal training sets hold), and
// bytes: numpy loads them with their dtype, shape and values.
TEST(Pickle, NumpyLoadsArraysAndBytes) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::TempDir dir;
  const PyValue value = PyValue::dict({
      {"joints", PyValue::dict({{0, PyValue::float32_array({2, 3}, {0, 1.5F, 2.25F, 1, -3, 1e-3F})},
                                {3, PyValue::float32_array({0, 3}, {})}})},
      {"size", PyValue::int64_array({3}, {3, 480, 640})},
      {"raw", PyValue::bytes(std::string("a\0\xff", 3))},
  });
  const std::string bytes = pickle(value);
  EXPECT_EQ(bytes.substr(0, 2), "\x80\x03") << "BINBYTES needs protocol 3";
  EXPECT_EQ(pickle(PyValue::List{1}).substr(0, 2), "\x80\x02") << "plain data stays protocol 2";
  testing::write_text(dir / "arrays.pickle", bytes);
  const auto result = testing::run(
      testing::shell_quote(python) + " -c \"import pickle; d = pickle.load(open('" +
      (dir / "arrays.pickle").string() +
      "', 'rb')); j = d['joints']; print(sorted(j), j[0].dtype, j[0].shape, j[0].tolist(), "
      "j[3].shape, d['size'].dtype, d['size'].tolist(), d['raw'])\"");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "[0, 3] float32 (2, 3) [[0.0, 1.5, 2.25], [1.0, -3.0, 0.0010000000474974513]] (0, 3) "
            "int64 [3, 480, 640] b'a\\x00\\xff'\n");
}

}  // namespace
}  // namespace labpose::projects
