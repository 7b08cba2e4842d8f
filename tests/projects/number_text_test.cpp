// Numbers written exactly as Python's repr() (what pandas writes into DeepLabCut's CSVs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "projects/number_text.hpp"

namespace labpose::projects {
namespace {

TEST(PythonFloatRepr, MatchesPython) {
  // Each expected string is what CPython 3.11 prints for repr(value).
  EXPECT_EQ(python_float_repr(0.95), "0.95");
  EXPECT_EQ(python_float_repr(265.0), "265.0");
  EXPECT_EQ(python_float_repr(21.521), "21.521");
  EXPECT_EQ(python_float_repr(250.05599999999998), "250.05599999999998");
  EXPECT_EQ(python_float_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_float_repr(1e-05), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00012345), "0.00012345");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(python_float_repr(12345678901234567.0), "1.2345678901234568e+16");
  EXPECT_EQ(python_float_repr(-0.5), "-0.5");
  EXPECT_EQ(python_float_repr(0.0), "0.0");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(python_float_repr(5e-324), "5e-324");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
  EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(ParseDouble, AcceptsWhatPandasAndUsersWrite) {
  EXPECT_EQ(parse_double("21.521"), 21.521);
  EXPECT_EQ(parse_double("-3"), -3.0);
  EXPECT_EQ(parse_double("+2.5"), 2.5);
  EXPECT_EQ(parse_double("1e-05"), 1e-05);
  EXPECT_EQ(parse_double(".5"), 0.5);
  EXPECT_TRUE(std::isnan(*parse_double("nan")));
  EXPECT_TRUE(std::isnan(*parse_double("NaN")));
  EXPECT_EQ(parse_double("-inf"), -std::numeric_limits<double>::infinity());
  EXPECT_FALSE(parse_double(""));
  EXPECT_FALSE(parse_double("12px"));
  EXPECT_FALSE(parse_double(" 1"));
  EXPECT_FALSE(parse_double("1,5"));
  EXPECT_FALSE(parse_double("--1"));
}

TEST(PythonFloatRepr, RoundTripsThroughParse) {
  for (const double value :
       {0.1, 1.0 / 3.0, 123.456e-7, 9.999999999999999e15, 480.0, 1e300, 2.5e-308}) {
    EXPECT_EQ(*parse_double(python_float_repr(value)), value) << python_float_repr(value);
  }
}

}  // namespace
}  // namespace labpose::projects
