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

// The unit roundoff is the largest step above 1 that rounds back to 1 (a tie, to even): 1 + u
// rounds to 1 and 1 + 2u is the next value of the dtype.
TEST(DType, UnitRoundoffIsHalfTheStepAboveOne) {
  for (int dt : {kFloat16, kBFloat16, kFloat32}) {
    double u = unitRoundoff(dt);
    EXPECT_EQ(roundToDType(1 + u, dt), 1.0) << dtypeName(dt);
    EXPECT_EQ(roundToDType(1 + 2 * u, dt), 1 + 2 * u) << dtypeName(dt);
    EXPECT_EQ(roundToDType(1 + 1.5 * u, dt), 1 + 2 * u) << dtypeName(dt);
  }
  volatile double u = unitRoundoff(kFloat64);
  EXPECT_EQ(1.0 + u, 1.0);
  EXPECT_GT(1.0 + 2 * u, 1.0);
  EXPECT_EQ(unitRoundoff(kInt8), 0);
  EXPECT_EQ(unitRoundoff(kInt32), 0);
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
// The bits storeElement writes for `v` as a 16-bit float of `dtype`.
uint16_t bitsOf(double v, int dtype) {
  uint16_t bits;
  storeElement(&bits, dtype, v);
  return bits;
}
uint16_t halfBitsOf(double v) { return bitsOf(v, kFloat16); }
uint16_t bf16BitsOf(double v) { return bitsOf(v, kBFloat16); }
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

// bfloat16 is float32's top half: 1 = 0x3f80'0000 → 0x3f80. The cases below are worked by hand
// from float32 bit patterns; the rounding is to nearest on the 16 bits dropped, ties to even.
TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(dtypeName(kBFloat16), "bfloat16");
  EXPECT_EQ(dtypeBytes(kBFloat16), 2);
  EXPECT_TRUE(dtypeIsFloat(kBFloat16));
  EXPECT_EQ(bf16BitsOf(1.0), 0x3f80);
  EXPECT_EQ(bf16BitsOf(-2.0), 0xc000);
  EXPECT_EQ(bf16BitsOf(0.1), 0x3dcd);        // 0x3dcccccd: dropped 0xcccd > half → up
  EXPECT_EQ(bf16BitsOf(3.14159265), 0x4049); // 0x40490fdb: dropped 0x0fdb < half → down
  // Ties: 1 + 2^-8 is 0x3f80'8000, exactly halfway between 0x3f80 and 0x3f81 → the even 0x3f80;
  // 1 + 3·2^-8 is 0x3f81'8000, halfway between 0x3f81 and 0x3f82 → the even 0x3f82.
  EXPECT_EQ(bf16BitsOf(1 + 0x1p-8), 0x3f80);
  EXPECT_EQ(bf16BitsOf(1 + 3 * 0x1p-8), 0x3f82);
  EXPECT_EQ(roundToDType(1 + 3 * 0x1p-8, kBFloat16), 1 + 4 * 0x1p-8);
  // Just above a tie rounds up.
  EXPECT_EQ(bf16BitsOf(1 + 0x1p-8 + 0x1p-20), 0x3f81);
  // float32's largest finite value rounds up to infinity; bfloat16's largest stays.
  EXPECT_EQ(bf16BitsOf(0x1.fffffep127), 0x7f80);
  EXPECT_EQ(bf16BitsOf(0x1.fep127), 0x7f7f);
  EXPECT_EQ(bf16BitsOf(-INFINITY), 0xff80);
  // Subnormals are kept (gradual underflow): float32's 2^-133 is 0x0000'0100 → 0x0001, and
  // 2^-134 (0x0000'0080) is a tie between 0 and 0x0001 → the even 0.
  EXPECT_EQ(bf16BitsOf(0x1p-133), 0x0001);
  EXPECT_EQ(bf16BitsOf(0x1p-134), 0x0000);
  EXPECT_EQ(bf16BitsOf(3 * 0x1p-134), 0x0002); // 0x180: a tie between 1 and 2 → 2
  EXPECT_EQ(bf16BitsOf(-0.0), 0x8000);
  // NaN stays a quiet NaN of its sign; rounding never turns its payload into infinity.
  uint32_t signalling = 0x7f80'0001, negative = 0xff80'ffff;
  float s, n;
  std::memcpy(&s, &signalling, 4);
  std::memcpy(&n, &negative, 4);
  EXPECT_EQ(bfloat16Bits(s), 0x7fc0);
  EXPECT_EQ(bfloat16Bits(n), 0xffc0);
  uint16_t nan = 0x7fc0;
  EXPECT_TRUE(std::isnan(loadElement(&nan, kBFloat16)));
  // Bits load back as exactly the value they hold.
  for (uint16_t bits : {0x3f80, 0xc000, 0x3dcd, 0x7f7f, 0x0001, 0x8000, 0x0080})
    EXPECT_EQ(bf16BitsOf(loadElement(&bits, kBFloat16)), bits) << bits;
}
