// RuntimeTest: the thread pool behind parallel loops — every index runs exactly once, whatever
// the range, back to back or after the workers went to sleep, and nested loops run serially.
#include "backend/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(int64_t n) : hits(static_cast<size_t>(n)) {}
};

void countHit(int64_t begin, int64_t end, void *c) {
  for (int64_t i = begin; i < end; ++i)
    static_cast<Counts *>(c)->hits[i].fetch_add(1);
}

void expectEachOnce(int64_t n) {
  Counts c(n);
  loupe_parallel_for(n, countHit, &c);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(c.hits[i].load(), 1) << "index " << i << " of " << n;
}

} // namespace

TEST(ParallelFor, RunsEveryIndexExactlyOnce) {
  for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 4097})
    expectEachOnce(n);
}

TEST(ParallelFor, BackToBackLaunchesLoseNoWork) {
  // Thousands of launches while the workers spin: a lost or doubled share shows up as a count
  // that is not 1.
  for (int r = 0; r < 5000; ++r)
    expectEachOnce(1 + r % 37);
}

TEST(ParallelFor, WakesWorkersThatWentToSleep) {
  for (int r = 0; r < 3; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30)); // past the spin: workers sleep
    expectEachOnce(100);
  }
}

namespace {
void nested(int64_t begin, int64_t end, void *c) {
  // A parallel loop inside a parallel body runs on the calling thread.
  for (int64_t i = begin; i < end; ++i) {
    Counts inner(5);
    loupe_parallel_for(5, countHit, &inner);
    int total = 0;
    for (auto &h : inner.hits)
      total += h.load();
    static_cast<Counts *>(c)->hits[i].fetch_add(total);
  }
}
} // namespace

TEST(ParallelFor, NestedLoopsRunSerially) {
  Counts c(9);
  loupe_parallel_for(9, nested, &c);
  for (auto &h : c.hits)
    EXPECT_EQ(h.load(), 5);
}

namespace {

// Halves each element of a float array in place, in the thread that runs the share.
void halve(int64_t begin, int64_t end, void *p) {
  volatile float *x = static_cast<float *>(p);
  for (int64_t i = begin; i < end; ++i)
    x[i] = x[i] * 0.5f;
}

} // namespace

// Subnormals flushed to zero while a KernelFloatMode(true) lives, in the calling thread and in
// the pool's threads (which take the caller's state for each loop); IEEE results otherwise, and
// the previous state back afterwards. On any x86-64 host: MXCSR's FTZ and DAZ are SSE2's.
TEST(KernelFloatMode, FlushesSubnormalsOnEveryThreadOfALoop) {
  const float tiny = 1e-39f; // subnormal: below FLT_MIN (1.18e-38)
  ASSERT_GT(tiny, 0.0f);
  ASSERT_LT(tiny, 1.17549435e-38f);
  const int64_t n = 1 << 16;
  std::vector<float> x(n, tiny);
  {
    loupe::backend::KernelFloatMode flush(true);
    EXPECT_TRUE(loupe::backend::KernelFloatMode::flushing());
    loupe_parallel_for(n, halve, x.data());
  }
  EXPECT_FALSE(loupe::backend::KernelFloatMode::flushing());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(x[i], 0.0f) << "element " << i << " (its share ran on a thread that kept IEEE)";
  std::vector<float> y(n, tiny);
  {
    loupe::backend::KernelFloatMode keep(false);
    loupe_parallel_for(n, halve, y.data());
  }
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], tiny * 0.5f) << "element " << i;
  EXPECT_GT(y[0], 0.0f);
}
