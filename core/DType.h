// DType: NNVM's integer dtype codes (0-10) and their names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loupe {

/// NNVM type codes as stored in the `dtype` graph attribute. -1 means unknown.
enum DTypeCode : int {
  kUnknownType = -1,
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kInt16 = 7,
  kUint16 = 8,
  kUint32 = 9,
  kUint64 = 10,
  kBoolean = 11,  ///< "bool": one byte holding 0 or 1 (Relay's bool; NNVM had none)
  kBFloat16 = 12, ///< "bfloat16": float32's top 16 bits (8-bit exponent, 7-bit mantissa)
};

/// Number of defined codes (0..kNumDTypes-1).
inline constexpr int kNumDTypes = 13;

/// The name of a code ("float32"), or "unknown" for -1 and out-of-range codes.
std::string_view dtypeName(int code);

/// The code for a name such as "float64", or nullopt if the name is not a dtype.
std::optional<int> dtypeFromName(std::string_view name);

/// Bytes per element of a code (4 for unknown codes, the size buffers are planned with).
int64_t dtypeBytes(int code);

/// True for the floating-point codes (float16/32/64, bfloat16).
bool dtypeIsFloat(int code);

/// The unit roundoff of a floating-point dtype, half the distance from 1 to the next value
/// (float32 2^-24, float64 2^-53, float16 2^-11, bfloat16 2^-8); 0 for the integer codes,
/// which do not round.
double unitRoundoff(int code);

/// True for the unsigned integer codes and bool (loaded by zero extension).
bool dtypeIsUnsigned(int code);

/// Rounds a value the way storing it in a tensor of this dtype would (float32 rounding,
/// integer truncation and wrap-around), so the reference interpreter keeps each dtype's
/// precision while computing in double.
double roundToDType(double v, int code);

/// The type a value of `code` is held in where bfloat16 is not (kernels' arithmetic, .npy files,
/// NumPy): float32 for bfloat16, whose values it holds exactly; `code` itself otherwise.
inline int widenedDType(int code) { return code == kBFloat16 ? kFloat32 : code; }

/// The bfloat16 bits of a float32 value: rounded to nearest, ties to even, on the 16 bits
/// dropped, as vcvtneps2bf16 rounds (a NaN stays a quiet NaN of the same sign; subnormals are
/// kept, IEEE's gradual underflow — the hardware's flushing is the kernels' denormals mode).
uint16_t bfloat16Bits(float v);

/// The float32 value of bfloat16 bits (exact: the bits are float32's top half).
float bfloat16Value(uint16_t bits);

/// roundToDType of every value of `values` (the reference interpreter's outputs: float32 in one
/// vectorised pass rather than a call per element).
void roundAllToDType(std::vector<double> &values, int code);

/// Reads one element of dtype `code` stored at `p` (the host's byte order) as a double.
double loadElement(const void *p, int code);

/// Writes `v`, rounded as roundToDType does, as one element of dtype `code` at `p`.
void storeElement(void *p, int code, double v);

} // namespace loupe
