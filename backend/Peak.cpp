// Peak: an FMA loop, an 8-bit dot-product loop and a bfloat16 pair-product loop timed on one core:
// 12 independent accumulator chains (8 for AVX2's vpmaddwd, whose 16 registers hold no more),
// enough to cover the latency on two pipes, at the widest vector width the kernels are compiled
// for.
#include "backend/Peak.h"

#include "backend/Codegen.h"
#include "backend/llvm/HostTarget.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace loupe::backend {

namespace {

// The first lane of each chain, summed: what a loop returns so that its work is kept. Read
// through memory, so that it needs no vector instructions of its own.
template <typename Lane, typename Vec, size_t N> double laneZeroSum(const Vec (&acc)[N]) {
  double sum = 0;
  for (const Vec &v : acc) {
    Lane x;
    std::memcpy(&x, &v, sizeof x);
    sum += static_cast<double>(x);
  }
  return sum;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,fma"), noinline)) double loop512(int64_t iters) {
  __m512 acc[12];
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k)
    acc[k] = _mm512_set1_ps(static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12 // the chains must stay in registers
    for (int k = 0; k < 12; ++k)
      acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  }
  return laneZeroSum<float>(acc);
}

__attribute__((target("avx2,fma"), noinline)) double loop256(int64_t iters) {
  __m256 acc[12];
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k)
    acc[k] = _mm256_set1_ps(static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; ++k)
      acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  }
  return laneZeroSum<float>(acc);
}

// 8-bit dot products: vpdpbusd (each int32 lane += four u8 x s8 products).
__attribute__((target("avx512f,avx512vnni"), noinline)) double dot512(int64_t iters) {
  __m512i acc[12];
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k)
    acc[k] = _mm512_set1_epi32(k);
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x01ff01ff);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; ++k)
      acc[k] = _mm512_dpbusd_epi32(acc[k], a, b);
  }
  return laneZeroSum<int32_t>(acc);
}

__attribute__((target("avx2,avxvnni"), noinline)) double dot256(int64_t iters) {
  __m256i acc[12];
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k)
    acc[k] = _mm256_set1_epi32(k);
  const __m256i a = _mm256_set1_epi32(0x01020304), b = _mm256_set1_epi32(0x01ff01ff);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; ++k)
      acc[k] = _mm256_dpbusd_avx_epi32(acc[k], a, b);
  }
  return laneZeroSum<int32_t>(acc);
}

// bfloat16 pairs: vdpbf16ps (each float32 lane += two bf16 × bf16 products). The operands are
// pairs of 1.0 and 2^-20, so that the sums grow without overflowing in the loop's lifetime.
__attribute__((target("avx512f,avx512bf16"), noinline)) double bf16dot512(int64_t iters) {
  __m512 acc[12];
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k)
    acc[k] = _mm512_set1_ps(static_cast<float>(k));
  const __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80),
                 b = (__m512bh)_mm512_set1_epi32(0x35803580);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; ++k)
      acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
  }
  return laneZeroSum<float>(acc);
}

// Without VNNI the kernels multiply 16-bit pairs (vpmaddwd, exact for 8-bit operands) and add
// them to their sums: that pair of instructions is the peak they are measured against. Each
// chain's multiply reads its sum (a constant product would be hoisted out of the loop).
__attribute__((target("avx512f,avx512bw"), noinline)) double madd512(int64_t iters) {
  __m512i acc[12];
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k)
    acc[k] = _mm512_set1_epi32(k);
  const __m512i b = _mm512_set1_epi32(0x0001ffff);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; ++k)
      acc[k] = _mm512_add_epi32(acc[k], _mm512_madd_epi16(acc[k], b));
  }
  return laneZeroSum<int32_t>(acc);
}

// Eight chains: AVX2 has 16 registers, and twelve sums with their products spill.
__attribute__((target("avx2"), noinline)) double madd256(int64_t iters) {
  __m256i acc[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k)
    acc[k] = _mm256_set1_epi32(k);
  const __m256i b = _mm256_set1_epi32(0x0001ffff);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k)
      acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(acc[k], b));
  }
  return laneZeroSum<int32_t>(acc);
}
#endif

// The dot-product loop of the instructions the kernels use (dotInstructions, which dot4's code
// generation reads): vpdpbusd on 512 or 256 bits, else vpmaddwd on 512 (avx512bw) or 256. The
// host must run the loop too (dotInstructions can be overridden for tests).
enum class Dot { None, Vnni512, Vnni256, Madd512, Madd256 };
Dot dotKind() {
#if defined(__x86_64__)
  DotInstructions d = dotInstructions();
  if (d.lanes16 && __builtin_cpu_supports("avx512vnni"))
    return Dot::Vnni512;
  if (d.lanes8 && __builtin_cpu_supports("avxvnni"))
    return Dot::Vnni256;
  if (d.pairs16 && __builtin_cpu_supports("avx512bw"))
    return Dot::Madd512;
  if (d.pairs8 && __builtin_cpu_supports("avx2"))
    return Dot::Madd256;
#endif
  return Dot::None;
}

int lanes() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && codegenHas("avx512f"))
    return 16;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && codegenHas("avx2") &&
      codegenHas("fma"))
    return 8;
#endif
  return 1;
}

__attribute__((noinline)) double loopScalar(int64_t iters) {
  float acc[12];
  for (int k = 0; k < 12; ++k)
    acc[k] = static_cast<float>(k);
  for (int64_t i = 0; i < iters; ++i)
    for (float &x : acc)
      x = x * 0.999999f + 1e-7f;
  double sum = 0;
  for (float x : acc)
    sum += x;
  return sum;
}

// The best of five timed runs of `loop` (2 million iterations, a few ms each) in billions of
// operations per second.
double bestRate(double (*loop)(int64_t), double opsPerIter) {
  double best = 0;
  volatile int64_t iters = 2'000'000;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    volatile double sink = loop(iters);
    (void)sink;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(iters) * opsPerIter / s / 1e9);
  }
  return best;
}

} // namespace

double fmaLoop(int64_t iters) {
#if defined(__x86_64__)
  if (lanes() == 16)
    return loop512(iters);
  if (lanes() == 8)
    return loop256(iters);
#endif
  return loopScalar(iters);
}

double fmaLoopFlopsPerIter() { return 2.0 * lanes() * 12; }

double dotLoop(int64_t iters) {
#if defined(__x86_64__)
  switch (dotKind()) {
  case Dot::Vnni512:
    return dot512(iters);
  case Dot::Vnni256:
    return dot256(iters);
  case Dot::Madd512:
    return madd512(iters);
  case Dot::Madd256:
    return madd256(iters);
  case Dot::None:
    break;
  }
#endif
  (void)iters;
  return 0;
}

double dotLoopOpsPerIter() {
  switch (dotKind()) {
  case Dot::Vnni512:
    return 2.0 * 64 * 12;
  case Dot::Vnni256:
  case Dot::Madd512:
    return 2.0 * 32 * 12;
  case Dot::Madd256:
    return 2.0 * 16 * 8;
  case Dot::None:
    break;
  }
  return 0;
}

const char *dotLoopInstruction() {
  switch (dotKind()) {
  case Dot::Vnni512:
  case Dot::Vnni256:
    return "vpdpbusd";
  case Dot::Madd512:
  case Dot::Madd256:
    return "vpmaddwd";
  case Dot::None:
    break;
  }
  return "";
}

double peakInt8GopsPerCore() {
  static const double peak =
      dotLoopOpsPerIter() == 0 ? 0.0 : bestRate(dotLoop, dotLoopOpsPerIter());
  return peak;
}

// Whether the host runs vdpbf16ps and the kernels are compiled with it.
bool hasBf16Dot() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512bf16") && codegenHas("avx512bf16") && codegenHas("avx512f");
#else
  return false;
#endif
}

double bf16Loop(int64_t iters) {
#if defined(__x86_64__)
  if (hasBf16Dot())
    return bf16dot512(iters);
#endif
  (void)iters;
  return 0;
}

double bf16LoopFlopsPerIter() { return hasBf16Dot() ? 2.0 * 32 * 12 : 0; }

double peakBf16GflopsPerCore() {
  static const double peak =
      bf16LoopFlopsPerIter() == 0 ? 0.0 : bestRate(bf16Loop, bf16LoopFlopsPerIter());
  return peak;
}

double peakGflopsPerCore() {
  static const double peak = bestRate(fmaLoop, fmaLoopFlopsPerIter());
  return peak;
}

} // namespace loupe::backend
