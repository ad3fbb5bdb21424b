// Runtime: a small persistent thread pool for the parallel loops of compiled kernels.
#include "backend/Runtime.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace loupe::backend {

namespace {

thread_local bool insideParallel = false;

// One job at a time: the range [0, n) split statically, one contiguous share per thread (the
// caller takes share 0). Workers spin for a while on the job counter before they sleep, so that
// back-to-back kernels (a network launches one parallel loop per kernel) do not pay a futex
// wake-up each; the caller spins until every share is done.
class Pool {
public:
  explicit Pool(int n) {
    for (int i = 1; i < n; ++i)
      workers_.emplace_back([this, i] { loop(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto &t : workers_)
      t.join();
  }

  void run(int64_t n, void (*body)(int64_t, void *), void *closure) {
    std::lock_guard<std::mutex> serial(runMutex_); // one job at a time
    n_ = n;
    body_ = body;
    closure_ = closure;
    pending_.store(static_cast<int>(workers_.size()));
    generation_.fetch_add(1); // publishes the job (sequentially consistent)
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> g(m_);
      wake_.notify_all();
    }
    share(0);
    while (pending_.load() != 0)
      pause();
  }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  void share(int k) {
    insideParallel = true;
    int64_t t = threads();
    for (int64_t i = n_ * k / t, end = n_ * (k + 1) / t; i < end; ++i)
      body_(i, closure_);
    insideParallel = false;
  }

  void loop(int k) {
    uint64_t seen = 0;
    for (;;) {
      // About a millisecond of spinning before sleeping.
      for (int spin = 0; spin < kSpins && generation_.load() == seen && !stop_.load(); ++spin)
        pause();
      if (generation_.load() == seen) {
        std::unique_lock<std::mutex> g(m_);
        sleepers_.fetch_add(1);
        wake_.wait(g, [&] { return stop_.load() || generation_.load() != seen; });
        sleepers_.fetch_sub(1);
      }
      if (stop_.load())
        return;
      seen = generation_.load();
      share(k);
      pending_.fetch_sub(1);
    }
  }

  static constexpr int kSpins = 20000;
  std::vector<std::thread> workers_;
  std::mutex m_, runMutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0}, sleepers_{0};
  int64_t n_ = 0;
  void (*body_)(int64_t, void *) = nullptr;
  void *closure_ = nullptr;
};

Pool &pool() {
  static Pool p(numThreads());
  return p;
}

} // namespace

int numThreads() {
  if (const char *env = std::getenv("LOUPE_NUM_THREADS"))
    if (int n = std::atoi(env); n > 0)
      return n;
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

} // namespace loupe::backend

extern "C" void loupe_parallel_for(int64_t n, void (*body)(int64_t, void *), void *closure) {
  if (n <= 0)
    return;
  if (loupe::backend::insideParallel || n == 1 || loupe::backend::numThreads() == 1) {
    for (int64_t i = 0; i < n; ++i)
      body(i, closure);
    return;
  }
  loupe::backend::pool().run(n, body, closure);
}
