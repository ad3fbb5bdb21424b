// Memory: element counts and byte sizes checked where shapes become allocations, against the
// memory this machine has, so that a shape a user typed gives a clear error instead of an
// allocation failure.
#pragma once

#include "core/Shape.h"

#include <cstdint>
#include <string>

namespace loupe {

/// The most elements a tensor may have: far above any machine's memory, and low enough that a
/// byte size computed from it (up to 8 bytes an element, plus alignment) cannot overflow.
inline constexpr int64_t kMaxElements = int64_t{1} << 56;

/// The number of elements of `s`; throws Error "shape (…) has a negative dimension -3" or
/// "shape (…) has more than 2^56 elements" instead of overflowing.
int64_t checkedNumElements(const Shape &s);

/// The physical memory of this machine in bytes (0 when it cannot be read).
uint64_t machineMemoryBytes();

/// "23.4 GiB", "512 B": a byte count for people.
std::string formatBytes(double bytes);

/// "100000×100000×1000 float32": a shape and dtype for people.
std::string describeTensor(const Shape &s, int dtype);

/// A limit below this machine's memory that allocations are checked against instead (0: none;
/// one for the whole process), as `:set memory_limit` sets it: for runs that share the
/// machine, and to see the check at work.
void setMemoryLimit(uint64_t bytes);
uint64_t memoryLimitBytes();

/// "1.5GiB", "512 MiB", "2048": a byte count with an optional binary unit (B, KiB, MiB, GiB,
/// TiB); throws Error for anything else or for 0.
uint64_t parseBytes(const std::string &text);

/// Throws Error "<what> needs 74.5 TiB (100000×100000×1000 float32); this machine has 23.4 GiB"
/// when `bytes` exceed this machine's memory (or "; the memory limit is 1.0 GiB" when a limit
/// below it is set).
void requireMemory(const std::string &what, double bytes, const std::string &detail);

/// requireMemory for a tensor the reference interpreter holds (8 bytes an element, whatever
/// the dtype); also checks the shape as checkedNumElements does, naming `what`.
void requireTensorMemory(const std::string &what, const Shape &s, int dtype);

} // namespace loupe
