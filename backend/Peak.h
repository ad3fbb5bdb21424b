// Peak: this machine's floating-point, bfloat16 and 8-bit integer peaks, measured rather than
// looked up, so that kernels' GFLOP/s can be given as a share of what the cores can do (`:profile`,
// the benchmarks).
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

/// Runs `iters` iterations of 12 independent chains of 8-bit dot products as the kernels compute
/// them (codegenTarget's instructions): VNNI's vpdpbusd (512 bits with avx512vnni, 256 with
/// avxvnni), else vpmaddwd and an add (16-bit pairs: 512 bits with avx512bw, 256 with avx2);
/// returns a value the compiler cannot drop, or 0 without any.
double dotLoop(int64_t iters);

/// Integer operations one call of dotLoop performs per iteration (a multiply and an add per
/// byte pair: 2 x 64 x 12 for 512-bit vpdpbusd), 0 when the CPU has no such instruction.
double dotLoopOpsPerIter();

/// The instruction dotLoop times ("vpdpbusd", "vpmaddwd"), "" without one.
const char *dotLoopInstruction();

/// Int8 GOP/s of one core (the int8 peak integer kernels are measured against): the best of a
/// few timed dot-product loops, measured once per process; 0 without 8-bit dot products.
double peakInt8GopsPerCore();

/// Runs `iters` iterations of 12 independent chains of vdpbf16ps on 512 bits (each float32 lane
/// adds two bfloat16 products) when the CPU has avx512_bf16 and the kernels are compiled with it;
/// returns a value the compiler cannot drop, or 0 without it.
double bf16Loop(int64_t iters);

/// Flops one call of bf16Loop performs per iteration (2 x 32 pairs x 12), 0 without vdpbf16ps.
double bf16LoopFlopsPerIter();

/// bfloat16 GFLOP/s of one core (the peak bfloat16 kernels are measured against): the best of a
/// few timed vdpbf16ps loops, measured once per process; 0 without avx512_bf16.
double peakBf16GflopsPerCore();

} // namespace loupe::backend
