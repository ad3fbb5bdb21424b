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
