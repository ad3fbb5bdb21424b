// Quantize: linear quantization's value arithmetic and the requantize multipliers (fixed point
// and float32).
#include "core/Quantize.h"

#include "core/DType.h"
#include "core/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loupe {

IntRange intRange(int dtype) {
  switch (dtype) {
  case kUint8:
    return {0, 255};
  case kInt8:
    return {-128, 127};
  case kUint16:
    return {0, 65535};
  case kInt16:
    return {-32768, 32767};
  case kInt32:
    return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  case kUint32:
    return {0, std::numeric_limits<uint32_t>::max()};
  default:
    fail("a quantized value must be of an integer type up to 32 bits, not ", dtypeName(dtype));
  }
}

double quantizeValue(float x, float scale, int64_t zero, int dtype) {
  IntRange r = intRange(dtype);
  double q = static_cast<double>(std::nearbyint(x / scale)) + static_cast<double>(zero);
  if (std::isnan(q))
    return 0; // ONNX leaves NaN undefined; every backend Loupe builds writes the zero of the cast
  return std::clamp(q, static_cast<double>(r.lo), static_cast<double>(r.hi));
}

float dequantizeValue(double q, float scale, int64_t zero) {
  return static_cast<float>(q - static_cast<double>(zero)) * scale;
}

FixedPoint fixedPointOf(double m, const std::string &what) {
  if (!(m > 0) || !std::isfinite(m))
    fail(what, ": the multiplier ", m, " must be positive and finite");
  int e = 0;
  double f = std::frexp(m, &e);                                // m = f · 2^e, f in [0.5, 1)
  auto q = static_cast<int64_t>(std::round(f * 2147483648.0)); // half away from zero
  if (q == (int64_t(1) << 31)) {
    q /= 2;
    ++e;
  }
  if (e < -31 || e > 31)
    fail(what, ": the multiplier ", m, " is outside [2^-31, 2^31): its fixed-point shift (", e,
         ") leaves 64-bit arithmetic");
  return {static_cast<int32_t>(q), e};
}

std::vector<FixedPoint> scaleRatios(const Tensor &from, const Tensor &to, const std::string &what) {
  size_t n = std::max(from.data.size(), to.data.size());
  std::vector<FixedPoint> m;
  for (size_t k = 0; k < n; ++k) {
    double a = static_cast<float>(from.data[from.data.size() == 1 ? 0 : k]);
    double b = static_cast<float>(to.data[to.data.size() == 1 ? 0 : k]);
    m.push_back(fixedPointOf(a / b, what));
  }
  return m;
}

std::vector<float> floatScaleRatios(const Tensor &from, const Tensor &to, const std::string &what) {
  size_t n = std::max(from.data.size(), to.data.size());
  std::vector<float> m;
  for (size_t k = 0; k < n; ++k) {
    float r = static_cast<float>(from.data[from.data.size() == 1 ? 0 : k]) /
              static_cast<float>(to.data[to.data.size() == 1 ? 0 : k]);
    if (!(r > 0) || !std::isfinite(r))
      fail(what, ": the multiplier ", r, " must be positive and finite");
    m.push_back(r);
  }
  return m;
}

double multiplyRound(int64_t x, float ratio) {
  return static_cast<double>(std::nearbyint(static_cast<float>(x) * ratio));
}

int64_t multiplyShift(int64_t x, int32_t multiplier, int32_t shift) {
  int left = std::max(shift, 0), right = 31 + std::max(-shift, 0);
  int64_t p = (x * (int64_t(1) << left)) * multiplier;
  return (p + (int64_t(1) << (right - 1))) >> right;
}

bool multiplyShiftFits(int64_t maxAbs, int32_t multiplier, int32_t shift) {
  int left = std::max(shift, 0), right = 31 + std::max(-shift, 0);
  // In long double (64-bit mantissa): exact for these powers of two and products below 2^64.
  long double p = static_cast<long double>(maxAbs) * std::ldexp(1.0L, left) * multiplier +
                  std::ldexp(1.0L, right - 1);
  return p < std::ldexp(1.0L, 63);
}

} // namespace loupe
