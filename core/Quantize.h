// Quantize: the arithmetic of linear quantization every layer shares — a value to its integer
// step and back, and requantization as a fixed-point multiply and a rounding shift (TVM's
// q_multiply_shift) or in float32 (ONNX Runtime's and fbgemm's) — so that the reference kernels,
// the loop interpreter, the code generator's tests and the passes that compute constants agree bit
// for bit.
#pragma once

#include "core/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe {

/// The range an integer dtype saturates to: uint8 [0, 255], int8 [-128, 127], int32, ….
struct IntRange {
  int64_t lo, hi;
};
/// The range of an integer dtype; throws Error for a float dtype.
IntRange intRange(int dtype);

/// QuantizeLinear's step of a float32 value: saturate(roundHalfEven(x / scale) + zero) to the
/// range of `dtype`, the division in float32 as ONNX's reference computes it.
double quantizeValue(float x, float scale, int64_t zero, int dtype);
/// DequantizeLinear's value of a step: (q - zero) · scale in float32.
float dequantizeValue(double q, float scale, int64_t zero);

/// A positive real multiplier as a 31-bit fixed-point mantissa and a power of two:
/// M ≈ multiplier · 2^(shift − 31), multiplier in [2^30, 2^31) (TVM's requantize: frexp, the
/// mantissa rounded half away from zero).
struct FixedPoint {
  int32_t multiplier;
  int32_t shift;
};
/// `m` in fixed point. Throws Error (naming `what`) unless m is positive, finite and in
/// [2^-31, 2^31): outside that the mantissa's shift leaves 64-bit arithmetic.
FixedPoint fixedPointOf(double m, const std::string &what);

/// The fixed-point ratios `from` / `to` of two scales (requantization's multipliers), one per
/// channel when either has several elements, else one: each scale a float32 as stored, divided
/// in double (TVM's rule). `what` names them in errors (fixedPointOf's).
std::vector<FixedPoint> scaleRatios(const Tensor &from, const Tensor &to, const std::string &what);

/// The float32 ratios `from` / `to` of two scales (requantization's multipliers when it computes
/// in float32, as ONNX Runtime's and fbgemm's kernels do): each scale a float32 as stored, divided
/// in float32; one per channel when either has several elements, else one. Throws Error (naming
/// `what`) for a ratio that is not positive and finite.
std::vector<float> floatScaleRatios(const Tensor &from, const Tensor &to, const std::string &what);

/// roundHalfEven(float32(x) · ratio) in float32 arithmetic: requantization's multiply when it
/// computes in float32 (x converted to float32 with ties to even first, as the kernels convert).
double multiplyRound(int64_t x, float ratio);

/// round(x · multiplier · 2^(shift − 31)), ties toward +∞ (TVM's UPWARD rounding), in 64-bit
/// arithmetic: x shifted left by max(shift, 0), multiplied, then the rounding offset added and an
/// arithmetic shift right by 31 + max(−shift, 0). The caller keeps the product in range
/// (multiplyShiftFits).
int64_t multiplyShift(int64_t x, int32_t multiplier, int32_t shift);

/// Whether every x with |x| <= maxAbs goes through multiplyShift(x, multiplier, shift) without
/// overflowing 64 bits (the shifted product and the rounding offset below 2^63).
bool multiplyShiftFits(int64_t maxAbs, int32_t multiplier, int32_t shift);

} // namespace loupe
