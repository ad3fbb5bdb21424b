// Runtime: what compiled kernels call at run time — the thread pool behind parallel loops. A C
// interface, so JIT code and exported shared libraries call the same function.
#pragma once

#include <cstdint>

extern "C" {

/// Runs body(i, closure) for every i in [0, n), split over the pool's threads (the caller
/// takes a share). Calls from inside a parallel body run serially.
void loupe_parallel_for(int64_t n, void (*body)(int64_t, void *), void *closure);
}

namespace loupe::backend {

/// Threads the pool uses (the hardware's count unless LOUPE_NUM_THREADS says otherwise), read
/// once per process.
int numThreads();

} // namespace loupe::backend
