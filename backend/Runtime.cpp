// Runtime: a small persistent thread pool for the parallel loops of compiled kernels.
#include "backend/Runtime.h"

#include <atomic>
#include <condition_variable>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace loupe::backend {

namespace {

thread_local bool insideParallel = false;
std::atomic<int> requestedThreads{0}; // loupe_set_num_threads' count, before the first use

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFlushBits = 0x8040; // MXCSR: FTZ (bit 15) and DAZ (bit 6)
unsigned readMode() { return _mm_getcsr(); }
void writeMode(unsigned csr) { _mm_setcsr(csr); }
#else
constexpr unsigned kFlushBits = 0;
unsigned readMode() { return 0; }
void writeMode(unsigned) {}
#endif

// One job at a time: the range [0, n) split statically into one contiguous share per thread,
// each share claimed by whichever thread asks first (the caller too). Workers spin for a while on
// the job counter before they sleep, so that back-to-back kernels (a network launches one parallel
// loop per kernel) do not pay a futex wake-up each; the caller spins until every share is done.
class Pool {
public:
  explicit Pool(int n) {
    for (int i = 1; i < n; ++i)
      workers_.emplace_back([this] { loop(); });
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

  void run(int64_t n, void (*body)(int64_t, int64_t, void *), void *closure) {
    std::lock_guard<std::mutex> serial(runMutex_); // one job at a time
    n_ = n;
    body_ = body;
    closure_ = closure;
    mode_ = readMode(); // the workers run the job in the caller's floating-point environment
    done_.store(0);
    next_.store(0);
    generation_.fetch_add(1); // publishes the job (sequentially consistent)
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> g(m_);
      wake_.notify_all();
    }
    claimShares();
    while (done_.load() != threads())
      pause();
  }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  // Runs shares until none is left. A share's range depends only on its number, so the split
  // is static and the results do not depend on who runs which share; a worker that is still
  // waking up when the caller has run every share costs nothing (small kernels then run on the
  // calling thread alone).
  void claimShares() {
    insideParallel = true;
    int64_t t = threads();
    for (int64_t k; (k = next_.fetch_add(1)) < t;) {
      if (int64_t begin = n_ * k / t, end = n_ * (k + 1) / t; begin < end)
        body_(begin, end, closure_);
      done_.fetch_add(1);
    }
    insideParallel = false;
  }

  void loop() {
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
      if (unsigned mode = mode_; readMode() != mode)
        writeMode(mode);
      claimShares();
    }
  }

  static constexpr int kSpins = 20000;
  std::vector<std::thread> workers_;
  std::mutex m_, runMutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<int64_t> next_{0}, done_{0}; ///< shares claimed, shares finished
  int64_t n_ = 0;
  unsigned mode_ = 0; ///< the caller's MXCSR
  void (*body_)(int64_t, int64_t, void *) = nullptr;
  void *closure_ = nullptr;
};

Pool &pool() {
  static Pool p(numThreads());
  return p;
}

} // namespace

KernelFloatMode::KernelFloatMode(bool flush) : saved_(readMode()) {
  writeMode(flush ? saved_ | kFlushBits : saved_ & ~kFlushBits);
}

KernelFloatMode::~KernelFloatMode() { writeMode(saved_); }

bool KernelFloatMode::flushing() { return kFlushBits && (readMode() & kFlushBits) == kFlushBits; }

int numThreads() {
  // Once: hardware_concurrency reads sysfs (an open and a read, about 5 us), and every parallel
  // loop asks; the pool is sized by the first answer anyway.
  static const int threads = [] {
    if (int asked = requestedThreads.load(); asked > 0)
      return asked;
    if (const char *env = std::getenv("LOUPE_NUM_THREADS"))
      if (int n = std::atoi(env); n > 0)
        return n;
    unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
  }();
  return threads;
}

} // namespace loupe::backend

extern "C" int loupe_set_num_threads(int n) {
  if (n > 0)
    loupe::backend::requestedThreads.store(n);
  return loupe::backend::numThreads();
}

extern "C" void loupe_parallel_for(int64_t n, void (*body)(int64_t, int64_t, void *),
                                   void *closure) {
  if (n <= 0)
    return;
  if (loupe::backend::insideParallel || n == 1 || loupe::backend::numThreads() == 1) {
    body(0, n, closure);
    return;
  }
  loupe::backend::pool().run(n, body, closure);
}
