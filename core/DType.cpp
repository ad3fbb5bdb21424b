// DType: code/name tables and per-dtype rounding.
#include "core/DType.h"

#include <array>
#include <cmath>
#include <cstdint>

namespace loupe {

namespace {
constexpr std::array<std::string_view, kNumDTypes> kNames = {
    "float32", "float64", "float16", "uint8",  "int32", "int8",
    "int64",   "int16",   "uint16",  "uint32", "uint64"};

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

template <typename T> double wrapInt(double v) {
  if (!std::isfinite(v))
    return 0;
  // Truncate toward zero, then wrap like a C cast through a 64-bit integer.
  return static_cast<double>(static_cast<T>(static_cast<int64_t>(std::trunc(v))));
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

bool dtypeIsFloat(int code) { return code == kFloat32 || code == kFloat64 || code == kFloat16; }

double roundToDType(double v, int code) {
  switch (code) {
  case kFloat32:
    return static_cast<double>(static_cast<float>(v));
  case kFloat64:
    return v;
  case kFloat16:
    return roundToHalf(v);
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
  case kInt16:
  case kUint16:
    return 2;
  case kInt8:
  case kUint8:
    return 1;
  default:
    return 4;
  }
}

} // namespace loupe
