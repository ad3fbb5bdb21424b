// Interrupt: one lock-free flag shared by the signal handler and the polling code.
#include "core/Interrupt.h"

#include <atomic>

namespace loupe {

namespace {
std::atomic<bool> requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler sets this flag");
} // namespace

void requestInterrupt() { requested.store(true, std::memory_order_relaxed); }
bool interruptRequested() { return requested.load(std::memory_order_relaxed); }
void clearInterrupt() { requested.store(false, std::memory_order_relaxed); }

void checkInterrupt() {
  if (interruptRequested())
    throw Interrupted();
}

} // namespace loupe
