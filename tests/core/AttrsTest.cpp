// AttrsTest: attribute string parsing and Python float formatting.
#include "core/Attrs.h"
#include "core/Error.h"

#include <gtest/gtest.h>

using namespace loupe;

TEST(Attrs, PyFloatRepr) {
  EXPECT_EQ(pyFloatRepr(1.0), "1.0");
  EXPECT_EQ(pyFloatRepr(-1.0), "-1.0");
  EXPECT_EQ(pyFloatRepr(0.1), "0.1");
  EXPECT_EQ(pyFloatRepr(1e-5), "1e-05");
  EXPECT_EQ(pyFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(pyFloatRepr(1e16), "1e+16");
  EXPECT_EQ(pyFloatRepr(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(pyFloatRepr(2.5e-7), "2.5e-07");
  EXPECT_EQ(pyFloatRepr(0.0), "0.0");
}

TEST(Attrs, IntTuple) {
  EXPECT_EQ(parseIntTuple("(1, 13, 100, 100)"), (std::vector<int64_t>{1, 13, 100, 100}));
  EXPECT_EQ(parseIntTuple("[2, 2]"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(parseIntTuple("3"), (std::vector<int64_t>{3}));
  EXPECT_EQ(parseIntTuple("(3,)"), (std::vector<int64_t>{3}));
  EXPECT_EQ(parseIntTuple("()"), (std::vector<int64_t>{}));
  EXPECT_EQ(parseIntTuple("-1"), (std::vector<int64_t>{-1}));
  EXPECT_THROW(parseIntTuple("(1, x)"), Error);
  EXPECT_THROW(parseIntTuple("(1, 2"), Error);
  EXPECT_THROW(parseIntTuple("(1,,2)"), Error);
}
