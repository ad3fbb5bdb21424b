// Peak: this machine's floating-point peak, measured rather than looked up, so that kernels'
// GFLOP/s can be given as a share of what the cores can do (`:profile`, the benchmarks).
#pragma once

#include <cstdint>

namespace loupe::backend {

/// Runs `iters` iterations of 12 independent chains of FMAs at the widest vector width the CPU
/// has (512, then 256 bits, else scalar); returns a value the compiler cannot drop.
double fmaLoop(int64_t iters);

/// Single-precision flops one call of fmaLoop performs per iteration (2 x lanes x 12).
double fmaLoopFlopsPerIter();

/// FP32 GFLOP/s of one core: the best of a few timed FMA loops, measured once per process
/// (about 50 ms).
double peakGflopsPerCore();

} // namespace loupe::backend
