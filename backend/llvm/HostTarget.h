// HostTarget: what LLVM says about the machine Loupe compiles for (triple, CPU, features).
#pragma once

#include <string>
#include <vector>

namespace loupe::backend {

/// The host as LLVM's target machinery sees it; `:target` prints it.
struct HostTarget {
  std::string llvmVersion; ///< e.g. "19.1.4"
  std::string triple;      ///< e.g. "x86_64-pc-linux-gnu"
  std::string cpu;         ///< e.g. "znver4"
  /// The SIMD features that matter for kernels (sse4.2, avx2, fma, avx512f, …), when present.
  std::vector<std::string> simdFeatures;
};

/// Asks LLVM for the host's triple, CPU name and features.
HostTarget detectHostTarget();

} // namespace loupe::backend
