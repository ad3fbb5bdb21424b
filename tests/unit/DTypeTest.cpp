// DTypeTest: every dtype's name, width and rounding, and its bytes in memory (half-precision
// bit patterns from IEEE 754's tables, integer wrap-around as a C cast, bool as 0 or 1).
#include "core/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace loupe;

TEST(DType, EveryCodeHasANameThatMapsBack) {
  for (int dt = 0; dt < kNumDTypes; ++dt)
    EXPECT_EQ(dtypeFromName(dtypeName(dt)), dt) << dt;
  EXPECT_EQ(dtypeName(kBoolean), "bool");
  EXPECT_EQ(dtypeBytes(kBoolean), 1);
  EXPECT_EQ(dtypeBytes(kFloat16), 2);
  EXPECT_TRUE(dtypeIsUnsigned(kUint32));
  EXPECT_FALSE(dtypeIsUnsigned(kInt8));
}

TEST(DType, RoundingWrapsIntegersAndMakesBools) {
  EXPECT_EQ(roundToDType(200, kInt8), -56);
  EXPECT_EQ(roundToDType(-1, kUint8), 255);
  EXPECT_EQ(roundToDType(-2.7, kInt32), -2);
  EXPECT_EQ(roundToDType(0.25, kBoolean), 1);
  EXPECT_EQ(roundToDType(0, kBoolean), 0);
  EXPECT_EQ(roundToDType(NAN, kBoolean), 1);
  // Beyond int64: uint64 keeps its upper half, the others saturate (no undefined conversion).
  EXPECT_EQ(roundToDType(0x1p63, kUint64), 0x1p63);
  EXPECT_EQ(roundToDType(0x1p70, kInt64), 0x1p63); // INT64_MAX as a double
  EXPECT_EQ(roundToDType(-0x1p70, kInt64), -0x1p63);
}

namespace {
uint16_t halfBitsOf(double v) {
  uint16_t bits;
  storeElement(&bits, kFloat16, v);
  return bits;
}
} // namespace

TEST(DType, HalfPrecisionBitPatterns) {
  EXPECT_EQ(halfBitsOf(1.0), 0x3c00);
  EXPECT_EQ(halfBitsOf(-2.0), 0xc000);
  EXPECT_EQ(halfBitsOf(65504.0), 0x7bff); // largest finite
  EXPECT_EQ(halfBitsOf(0x1p-24), 0x0001); // smallest subnormal
  EXPECT_EQ(halfBitsOf(0x1p-14), 0x0400); // smallest normal
  EXPECT_EQ(halfBitsOf(0.1), 0x2e66);     // 0.0999755859375, round to nearest
  EXPECT_EQ(halfBitsOf(1e6), 0x7c00);     // overflows to infinity
  EXPECT_EQ(halfBitsOf(-0.0), 0x8000);
  for (uint16_t bits : {0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400, 0x2e66, 0x8000, 0x03ff}) {
    double v = loadElement(&bits, kFloat16);
    EXPECT_EQ(halfBitsOf(v), bits) << v;
  }
  uint16_t nan = 0x7e00;
  EXPECT_TRUE(std::isnan(loadElement(&nan, kFloat16)));
}

TEST(DType, ElementsRoundTripThroughMemory) {
  unsigned char buf[8];
  struct Case {
    int dt;
    double in, out;
  };
  for (Case c : {Case{kInt8, 200, -56}, Case{kUint8, 255, 255}, Case{kInt16, -300, -300},
                 Case{kUint16, 65535, 65535}, Case{kInt32, -7, -7},
                 Case{kUint32, 4294967295.0, 4294967295.0}, Case{kInt64, -0x1p40, -0x1p40},
                 Case{kUint64, 0x1p63, 0x1p63}, Case{kBoolean, 3, 1}, Case{kFloat32, 0.1, 0.1f},
                 Case{kFloat64, 0.1, 0.1}}) {
    std::memset(buf, 0xAB, sizeof buf);
    storeElement(buf, c.dt, c.in);
    EXPECT_EQ(loadElement(buf, c.dt), c.out) << dtypeName(c.dt);
    // Only the dtype's own bytes are written.
    if (dtypeBytes(c.dt) < 8) {
      EXPECT_EQ(buf[dtypeBytes(c.dt)], 0xAB) << dtypeName(c.dt);
    }
  }
  // A uint64's top value is exact in memory even though a double rounds it up to 2^64.
  storeElement(buf, kUint64, 0x1p64);
  uint64_t u;
  std::memcpy(&u, buf, 8);
  EXPECT_EQ(u, UINT64_MAX);
}
