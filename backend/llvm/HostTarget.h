// HostTarget: what LLVM says about the machine Loupe compiles for (triple, CPU, features), what
// it knows of named CPUs, and the L2 the operating system reports.
#pragma once

#include <cstdint>
#include <optional>
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
  /// Every feature LLVM detects on the host.
  std::vector<std::string> features;
  /// One core's L2 in bytes as the operating system reports it (0 when it does not).
  int64_t l2Bytes = 0;
};

/// Asks LLVM for the host's triple, CPU name and features, and the OS for its L2.
HostTarget detectHostTarget();

/// The CPU generated code is compiled for: the host, or with the environment variable
/// LOUPE_CODEGEN_CPU=NAME the CPU NAME of LLVM's tables when the host has every feature it has —
/// an older CPU's code run here, to measure how its kernels run (AVX2 without VNNI on an AVX-512
/// machine). A name LLVM does not know, or whose features the host lacks (its code would stop on
/// an illegal instruction), is ignored with a warning on stderr. Read once per process.
HostTarget codegenTarget();

/// Whether code is compiled with `feature` ("avx512bf16", "avx512vnni", …): one of
/// codegenTarget()'s features, which the host has too.
bool codegenHas(const std::string &feature);

/// The features LLVM's X86 tables give a CPU name ("znver3" → … avx2 fma …), or nullopt for a
/// name they do not know.
std::optional<std::vector<std::string>> cpuFeaturesOf(const std::string &cpu);

/// Tells core (core/Target.h) where CPU names get their features and what the host is; done
/// once per process, by the engine and by build, before any target is sized. With the
/// environment variable LOUPE_HOST_CPU=NAME the host is sized as the CPU NAME (LLVM's features
/// for it, its class's L2): a test run pinned to a CPU checks the same schedules on any machine.
void installTargetInfo();

} // namespace loupe::backend
