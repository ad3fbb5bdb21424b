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

// Workers sleep until a job is posted, take chunks of the index range from an atomic counter,
// and report when the range is exhausted; the posting thread works too.
class Pool {
public:
  explicit Pool(int n) {
    for (int i = 1; i < n; ++i)
      workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto &t : workers_)
      t.join();
  }

  void run(int64_t n, void (*body)(int64_t, void *), void *closure) {
    std::lock_guard<std::mutex> serial(runMutex_); // one job at a time
    {
      std::lock_guard<std::mutex> g(m_);
      n_ = n;
      body_ = body;
      closure_ = closure;
      next_ = 0;
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> g(m_);
    done_.wait(g, [this] { return busy_ == 0; });
  }

private:
  void work() {
    insideParallel = true;
    int64_t chunk = std::max<int64_t>(1, n_ / (4 * (static_cast<int64_t>(workers_.size()) + 1)));
    for (;;) {
      int64_t start = next_.fetch_add(chunk);
      if (start >= n_)
        break;
      int64_t end = std::min(n_, start + chunk);
      for (int64_t i = start; i < end; ++i)
        body_(i, closure_);
    }
    insideParallel = false;
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> g(m_);
        wake_.wait(g, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
      }
      work();
      std::lock_guard<std::mutex> g(m_);
      if (--busy_ == 0)
        done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_, runMutex_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  int busy_ = 0;
  int64_t n_ = 0;
  void (*body_)(int64_t, void *) = nullptr;
  void *closure_ = nullptr;
  std::atomic<int64_t> next_{0};
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
