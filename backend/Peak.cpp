// Peak: an FMA loop timed on one core: 12 independent accumulator chains, enough to cover the
// FMA latency on two pipes, at the widest vector width the CPU supports.
#include "backend/Peak.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace loupe::backend {

namespace {

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
  alignas(64) float lanes[16];
  double sum = 0;
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k) {
    _mm512_store_ps(lanes, acc[k]);
    sum += lanes[0];
  }
  return sum;
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
  alignas(32) float lanes[8];
  double sum = 0;
#pragma GCC unroll 12
  for (int k = 0; k < 12; ++k) {
    _mm256_store_ps(lanes, acc[k]);
    sum += lanes[0];
  }
  return sum;
}
#endif

int lanes() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f"))
    return 16;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
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

double peakGflopsPerCore() {
  static const double peak = [] {
    double best = 0;
    volatile int64_t iters = 2'000'000;
    for (int r = 0; r < 5; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      volatile double sink = fmaLoop(iters);
      (void)sink;
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, static_cast<double>(iters) * fmaLoopFlopsPerIter() / s / 1e9);
    }
    return best;
  }();
  return peak;
}

} // namespace loupe::backend
