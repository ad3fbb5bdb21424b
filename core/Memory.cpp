// Memory: checked element counts and allocations compared with this machine's memory.
#include "core/Memory.h"

#include "core/DType.h"
#include "core/Error.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace loupe {

int64_t checkedNumElements(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 0)
      fail("shape ", shapeToTuple(s), " has a negative dimension ", d);
  for (int64_t d : s) {
    if (d == 0)
      return 0;
    if (n > kMaxElements / d)
      fail("shape ", shapeToTuple(s), " has more than 2^56 elements");
    n *= d;
  }
  return n;
}

uint64_t machineMemoryBytes() {
  static const uint64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size)
                                 : uint64_t{0};
  }();
  return bytes;
}

namespace {
std::atomic<uint64_t> gMemoryLimit{0};
} // namespace

void setMemoryLimit(uint64_t bytes) { gMemoryLimit = bytes; }

uint64_t memoryLimitBytes() { return gMemoryLimit; }

uint64_t parseBytes(const std::string &text) {
  static const std::pair<const char *, double> units[] = {
      {"TiB", 0x1p40}, {"GiB", 0x1p30}, {"MiB", 0x1p20}, {"KiB", 0x1p10}, {"B", 1}};
  const char *begin = text.c_str();
  char *end = nullptr;
  double v = std::strtod(begin, &end);
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ')
    unit.erase(0, 1);
  double scale = unit.empty() ? 1 : 0;
  for (const auto &[name, s] : units)
    if (unit == name)
      scale = s;
  if (end == begin || scale == 0 || !(v > 0) || !std::isfinite(v) || v * scale >= 0x1p63)
    fail("'", text, "' is not a size in bytes (write 512MiB, 1.5GiB, …)");
  return static_cast<uint64_t>(v * scale);
}

std::string formatBytes(double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string describeTensor(const Shape &s, int dtype) {
  std::string d;
  for (size_t i = 0; i < s.size(); ++i)
    d += (i ? "×" : "") + std::to_string(s[i]);
  return (s.empty() ? "scalar" : d) + " " + std::string(dtypeName(dtype));
}

void requireMemory(const std::string &what, double bytes, const std::string &detail) {
  uint64_t have = machineMemoryBytes(), limit = gMemoryLimit;
  bool limited = limit != 0 && (have == 0 || limit < have);
  if (limited)
    have = limit;
  if (have != 0 && bytes > static_cast<double>(have))
    fail(what, " needs ", formatBytes(bytes), detail.empty() ? "" : " (" + detail + ")",
         limited ? "; the memory limit is " : "; this machine has ",
         formatBytes(static_cast<double>(have)));
}

void requireTensorMemory(const std::string &what, const Shape &s, int dtype) {
  int64_t n;
  try {
    n = checkedNumElements(s);
  } catch (const Error &e) {
    fail(what, ": ", e.what());
  }
  requireMemory(what, static_cast<double>(n) * sizeof(double), describeTensor(s, dtype));
}

} // namespace loupe
