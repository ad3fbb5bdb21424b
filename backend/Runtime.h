// Runtime: what compiled kernels call at run time — the thread pool behind parallel loops. A C
// interface, so JIT code and exported shared libraries call the same function.
#pragma once

#include <cstdint>

// Visible from a shared library built with hidden symbols (an export's deploy.so).
#define LOUPE_RUNTIME_API __attribute__((visibility("default")))

extern "C" {

/// Runs the iterations [0, n) of a parallel loop, split over the pool's threads in one
/// contiguous share each (the caller takes one): body(begin, end, closure) runs [begin, end),
/// so a body pays its call and its closure's loads once per share, not once per iteration.
/// Calls from inside a parallel body run serially, as body(0, n, closure).
LOUPE_RUNTIME_API void loupe_parallel_for(int64_t n, void (*body)(int64_t, int64_t, void *),
                                          void *closure);

/// Asks for `n` threads in the pool (n > 0) before its first use — an exported network's
/// loupe_create does, from its argument — and returns the count in effect: the first answer
/// stands for the process (LOUPE_NUM_THREADS, else the hardware's count, when none was asked).
LOUPE_RUNTIME_API int loupe_set_num_threads(int n);
}

namespace loupe::backend {

/// This thread's floating-point environment for running kernels, while the object lives:
/// with `flush`, subnormal operands read as zero and subnormal results become zero (the MXCSR's
/// DAZ and FTZ bits, as deployment runtimes offer: PyTorch's set_flush_denormal, ONNX Runtime's
/// denormal_as_zero); without, IEEE arithmetic. The previous state comes back at the end. The
/// pool's threads take the calling thread's state for each parallel loop, so one of these
/// around a run covers every thread that runs its kernels. Subnormals matter for speed: on
/// Intel CPUs an operation on one takes a microcode assist of about a hundred cycles.
class KernelFloatMode {
public:
  explicit KernelFloatMode(bool flush);
  ~KernelFloatMode();
  KernelFloatMode(const KernelFloatMode &) = delete;
  KernelFloatMode &operator=(const KernelFloatMode &) = delete;

  /// Whether this thread flushes subnormals now.
  static bool flushing();

private:
  unsigned saved_;
};

/// Threads the pool uses (loupe_set_num_threads' count if it came first, else the hardware's
/// unless LOUPE_NUM_THREADS says otherwise), read once per process.
int numThreads();

} // namespace loupe::backend
