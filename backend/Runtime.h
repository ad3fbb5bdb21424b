// Runtime: what compiled kernels call at run time — the thread pool behind parallel loops. A C
// interface, so JIT code and exported shared libraries call the same function.
#pragma once

#include <cstdint>

extern "C" {

/// Runs the iterations [0, n) of a parallel loop, split over the pool's threads in one
/// contiguous share each (the caller takes one): body(begin, end, closure) runs [begin, end),
/// so a body pays its call and its closure's loads once per share, not once per iteration.
/// Calls from inside a parallel body run serially, as body(0, n, closure).
void loupe_parallel_for(int64_t n, void (*body)(int64_t, int64_t, void *), void *closure);
}

namespace loupe::backend {

/// Threads the pool uses (the hardware's count unless LOUPE_NUM_THREADS says otherwise), read
/// once per process.
int numThreads();

} // namespace loupe::backend
