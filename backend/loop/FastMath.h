// FastMath: exp, tanh, sigmoid and float32 erf rewritten as polynomial approximations in the
// loop IR, so a vector loop computes them in vector registers instead of calling libm per lane.
#pragma once

#include "core/loop/LoopIR.h"

namespace loupe::loop {

/// Every exp, tanh and sigmoid call of a float32 or float64 value, and every erf call of a
/// float32 one, stored by `s` replaced with its polynomial form, each intermediate bound once by
/// a `let` around the store.
///
/// e^x is a Cody–Waite range reduction x = n·ln2 + r, a polynomial in r (float32: Cephes'
/// expf, degree 7) or a Padé form (float64: Cephes' exp), scaled by 2^n with the `ldexp`
/// intrinsic. The argument is clamped to where 2^n is a normal number: below it the result is
/// the smallest normal instead of a denormal or 0, above it a large finite number instead of
/// inf. tanh(x) is 1 - 2/(e^2x + 1) (absolute error a few units of 1's last place) and
/// sigmoid(x) 1/(1 + e^-x). erf(x) (float32; float64 keeps libm's) is x·P(x²)/Q(x²) on
/// [-4, 4], a rational fit of degrees 5 and 5 (relative error 2.5e-8 in exact arithmetic, 3.4
/// float32 ulps evaluated in float32; scripts/fit_erf.py), x clamped there, where erf rounds to
/// ±1 in float32. Under a lazy tvm_if_then_else branch (the tail of a vector
/// reduction) the argument is bound as tvm_if_then_else(the branch's conditions, x, 0), so the
/// let reads only what the branch would.
Stmt fastMath(const Stmt &s);

} // namespace loupe::loop
