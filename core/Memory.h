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

/// Throws Error "<what> needs 74.5 TiB (100000×100000×1000 float32); this machine has 23.4 GiB"
/// when `bytes` exceed this machine's memory.
void requireMemory(const std::string &what, double bytes, const std::string &detail);

/// requireMemory for a tensor the reference interpreter holds (8 bytes an element, whatever
/// the dtype); also checks the shape as checkedNumElements does, naming `what`.
void requireTensorMemory(const std::string &what, const Shape &s, int dtype);

} // namespace loupe
