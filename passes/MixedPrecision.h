// MixedPrecision: which ops ToMixedPrecision computes in bfloat16 and why the others stay float32
// (the rules the pass applies, for `:precision NODE` to explain).
#pragma once

#include <string>

namespace loupe {

/// Whether an op computes in bfloat16 under ToMixedPrecision, and the reason in a sentence.
struct PrecisionRule {
  bool bfloat16 = false;
  std::string why;
};

/// The rule for op `op` (an op name such as "conv2d" or "softmax"); for a `cast`, `castTo` is
/// the type it casts to.
PrecisionRule mixedPrecisionRule(const std::string &op, const std::string &castTo = "");

/// A build's precision as `:build precision=` and `:set precision` take it: true for "bf16",
/// false for "fp32"; anything else throws Error with the one message both print.
bool bfloat16Precision(const std::string &word);

} // namespace loupe
