// DType: code/name tables and per-dtype rounding.
#include "core/DType.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace loupe {

namespace {
constexpr std::array<std::string_view, kNumDTypes> kNames = {
    "float32", "float64", "float16", "uint8",  "int32", "int8",    "int64",
    "int16",   "uint16",  "uint32",  "uint64", "bool",  "bfloat16"};

// IEEE half precision rounding (round to nearest even), done through float bits.
double roundToHalf(double v) {
  if (!std::isfinite(v))
    return v;
  float f = static_cast<float>(v);
  double a = std::fabs(f);
  if (a >= 65520.0)
    return std::copysign(INFINITY, f);
  if (a < 6.103515625e-05) { // subnormal half: fixed step 2^-24
    double step = 5.960464477539063e-08;
    return std::nearbyint(f / step) * step;
  }
  int e;
  std::frexp(a, &e);
  double step = std::ldexp(1.0, e - 11); // 10 mantissa bits + implicit one
  return std::copysign(std::nearbyint(a / step) * step, f);
}

// IEEE half bits of a value already rounded to half precision.
uint16_t halfBits(double h) {
  uint16_t sign = std::signbit(h) ? 0x8000 : 0;
  double a = std::fabs(h);
  if (std::isnan(h))
    return sign | 0x7e00;
  if (std::isinf(h))
    return sign | 0x7c00;
  if (a < 6.103515625e-05) // subnormal (or zero): a multiple of 2^-24
    return sign | static_cast<uint16_t>(a / 5.960464477539063e-08);
  int e;
  double m = std::frexp(a, &e); // a = m 2^e, m in [0.5, 1)
  auto mantissa = static_cast<uint16_t>((m * 2 - 1) * 1024);
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | mantissa;
}

double halfValue(uint16_t bits) {
  double sign = bits & 0x8000 ? -1.0 : 1.0;
  int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  if (e == 0x1f)
    return m ? NAN : sign * INFINITY;
  if (e == 0)
    return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

template <typename T> T loadAs(const void *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void storeAs(void *p, T v) { std::memcpy(p, &v, sizeof v); }

template <typename T> double wrapInt(double v) {
  if (!std::isfinite(v))
    return 0;
  // Truncate toward zero, then wrap like a C cast through a 64-bit integer; beyond the 64-bit
  // range (where that cast is undefined) uint64 keeps [2^63, 2^64] (2^64 being UINT64_MAX
  // rounded to a double, so rounding is idempotent) and the rest saturates.
  double t = std::trunc(v);
  if (t >= -0x1p63 && t < 0x1p63)
    return static_cast<double>(static_cast<T>(static_cast<int64_t>(t)));
  if (std::is_same_v<T, uint64_t> && t >= 0)
    return std::min(t, 0x1p64);
  return static_cast<double>(static_cast<T>(t < 0 ? INT64_MIN : INT64_MAX));
}
} // namespace

std::string_view dtypeName(int code) {
  if (code < 0 || code >= kNumDTypes)
    return "unknown";
  return kNames[code];
}

std::optional<int> dtypeFromName(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kNames[i] == name)
      return i;
  return std::nullopt;
}

bool dtypeIsFloat(int code) {
  return code == kFloat32 || code == kFloat64 || code == kFloat16 || code == kBFloat16;
}

double unitRoundoff(int code) {
  switch (code) {
  case kFloat32:
    return std::ldexp(1.0, -24);
  case kFloat64:
    return std::ldexp(1.0, -53);
  case kFloat16:
    return std::ldexp(1.0, -11);
  case kBFloat16:
    return std::ldexp(1.0, -8);
  default:
    return 0;
  }
}

uint16_t bfloat16Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if (std::isnan(v)) // quieted, sign and top payload bits kept (rounding could make it infinite)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Adding 0x7fff plus the kept part's lowest bit rounds the dropped half to nearest, ties to
  // even; a carry into the exponent is the correct result (up to infinity at the top).
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float bfloat16Value(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float v;
  std::memcpy(&v, &wide, sizeof v);
  return v;
}

bool dtypeIsUnsigned(int code) {
  return code == kUint8 || code == kUint16 || code == kUint32 || code == kUint64 ||
         code == kBoolean;
}

void roundAllToDType(std::vector<double> &values, int code) {
  if (code == kFloat64)
    return;
  if (code == kFloat32) {
    for (double &v : values)
      v = static_cast<double>(static_cast<float>(v));
    return;
  }
  for (double &v : values)
    v = roundToDType(v, code);
}

double roundToDType(double v, int code) {
  switch (code) {
  case kFloat32:
    return static_cast<double>(static_cast<float>(v));
  case kFloat64:
    return v;
  case kFloat16:
    return roundToHalf(v);
  case kBFloat16: // through float32, as a bfloat16 result is produced from a float32 one
    return bfloat16Value(bfloat16Bits(static_cast<float>(v)));
  case kUint8:
    return wrapInt<uint8_t>(v);
  case kInt32:
    return wrapInt<int32_t>(v);
  case kInt8:
    return wrapInt<int8_t>(v);
  case kInt64:
    return wrapInt<int64_t>(v);
  case kInt16:
    return wrapInt<int16_t>(v);
  case kUint16:
    return wrapInt<uint16_t>(v);
  case kUint32:
    return wrapInt<uint32_t>(v);
  case kUint64:
    return wrapInt<uint64_t>(v);
  case kBoolean:
    return v != 0 ? 1.0 : 0.0; // NaN is true, as in C
  default:
    return v;
  }
}

int64_t dtypeBytes(int dtype) {
  switch (dtype) {
  case kFloat64:
  case kInt64:
  case kUint64:
    return 8;
  case kFloat16:
  case kBFloat16:
  case kInt16:
  case kUint16:
    return 2;
  case kInt8:
  case kUint8:
  case kBoolean:
    return 1;
  default:
    return 4;
  }
}

} // namespace loupe

namespace loupe {

double loadElement(const void *p, int code) {
  switch (code) {
  case kFloat32:
    return loadAs<float>(p);
  case kFloat64:
    return loadAs<double>(p);
  case kFloat16:
    return halfValue(loadAs<uint16_t>(p));
  case kBFloat16:
    return bfloat16Value(loadAs<uint16_t>(p));
  case kUint8:
  case kBoolean:
    return loadAs<uint8_t>(p);
  case kInt8:
    return loadAs<int8_t>(p);
  case kInt16:
    return loadAs<int16_t>(p);
  case kUint16:
    return loadAs<uint16_t>(p);
  case kInt32:
    return loadAs<int32_t>(p);
  case kUint32:
    return loadAs<uint32_t>(p);
  case kUint64:
    return static_cast<double>(loadAs<uint64_t>(p));
  default:
    return static_cast<double>(loadAs<int64_t>(p));
  }
}

void storeElement(void *p, int code, double v) {
  v = roundToDType(v, code);
  switch (code) {
  case kFloat32:
    return storeAs(p, static_cast<float>(v));
  case kFloat64:
    return storeAs(p, v);
  case kFloat16:
    return storeAs(p, halfBits(v));
  case kBFloat16:
    return storeAs(p, bfloat16Bits(static_cast<float>(v)));
  case kUint8:
  case kBoolean:
    return storeAs(p, static_cast<uint8_t>(v));
  case kInt8:
    return storeAs(p, static_cast<int8_t>(v));
  case kInt16:
    return storeAs(p, static_cast<int16_t>(v));
  case kUint16:
    return storeAs(p, static_cast<uint16_t>(v));
  case kInt32:
    return storeAs(p, static_cast<int32_t>(v));
  case kUint32:
    return storeAs(p, static_cast<uint32_t>(v));
  case kUint64: // roundToDType wrapped it into range; 2^64 - 1 rounds up to 2^64 as a double
    return storeAs(p, v >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(v));
  default:
    return storeAs(p, v >= 0x1p63 ? INT64_MAX : static_cast<int64_t>(v));
  }
}

} // namespace loupe
