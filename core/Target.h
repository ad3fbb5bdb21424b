// Target: what the opt_level 3 layouts and schedules need to know of a target string's CPU —
// derived from the CPU's vector features, not from its name.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loupe {

/// The CPU of a target as the blocked layouts and register tiles see it.
struct TargetCpu {
  int64_t vectorBytes = 32;    ///< bytes per vector register (16 SSE, 32 AVX2, 64 AVX-512)
  int64_t registers = 16;      ///< vector registers (16 xmm/ymm, 32 zmm)
  int64_t l2Bytes = 512 << 10; ///< one core's L2, which a tile's reused weights must fit in
  /// Whether an FMA can read a scalar broadcast from memory (AVX-512's `{1to16}`); without it
  /// (AVX2) every broadcast input occupies a register while it is used.
  bool broadcastOperand = false;
  /// How it was derived, for `:target` ("features of znver3 (LLVM): avx2 fma; L2 512 KiB
  /// assumed for its class").
  std::string derivation = {};

  /// Lanes of one vector register for elements of `elementBytes`.
  int64_t lanes(int64_t elementBytes) const { return vectorBytes / elementBytes; }
  /// A short name of its vector unit: "AVX-512", "AVX2" or "SSE".
  std::string isa() const;
};

/// The sizing a set of features gives: avx512f → 64-byte vectors, 32 registers and broadcast
/// operands; avx2 with fma → 32 bytes and 16 registers; anything less → SSE's 16 bytes and 16
/// registers. `l2Bytes` is the core's L2.
TargetCpu cpuFromFeatures(const std::vector<std::string> &features, int64_t l2Bytes);

/// The L2 a CPU of `features`' class is assumed to have when it is named rather than measured:
/// 1 MiB with AVX-512, else 512 KiB (so that a session which names a CPU sizes the same on every
/// machine).
int64_t assumedL2(const std::vector<std::string> &features);

/// Where CPU names get their features: LLVM's CPU tables, which the backend supplies (core does
/// not include LLVM). Returns nullopt for a name LLVM does not know.
using CpuFeatureSource =
    std::function<std::optional<std::vector<std::string>>(const std::string &cpu)>;
void setCpuFeatureSource(CpuFeatureSource source);

/// The machine Loupe runs on, as the backend measured it: its CPU's name, the features it
/// really has (a VM may hide some its name implies) and the L2 its operating system reports.
struct HostCpu {
  std::string name;
  std::vector<std::string> features;
  int64_t l2Bytes = 0;
};
void setHostCpu(HostCpu host);
/// The machine as set by setHostCpu, if it was.
std::optional<HostCpu> hostCpu();

/// The CPU of a target string "llvm [-mcpu=NAME] [-mattr=+f,-g,…]":
/// - `-mcpu=native`: this machine, its own features and L2 (what a plain "llvm" means at
///   opt_level 3);
/// - any NAME: its features as LLVM defines them and the L2 of its class (assumedL2), so that a
///   session which names a CPU prints the same schedules on any machine — also on a machine of
///   that very family, whose own L2 may differ;
/// - no -mcpu: x86-64-v3's features (AVX2 and FMA), the baseline the seed-era layouts assume;
/// - `-mattr` adds (+) or removes (-) features after that.
/// Throws Error for a CPU name LLVM does not know (or when no feature source is set).
TargetCpu targetCpuOf(const std::string &target);

/// A matrix product's register tile: `rows` rows x `vectors` vectors of columns.
struct MatmulTile {
  int64_t rows, vectors;
};

/// The tile of up to four vectors of the `columns` with the fewest loads per FMA whose
/// accumulators fit the registers beside its rhs vectors and the lhs broadcast: 6 rows x 4
/// vectors with AVX-512's 32 registers (10 loads for 24 FMAs), 4 x 3 with AVX2's 16 (7 for 12);
/// fewer rows or columns when the product has fewer. (batch_matmul's schedule, and the pack
/// width AlterOpLayout gives a dense over rows.)
MatmulTile chooseMatmulTile(int64_t rows, int64_t columns, const TargetCpu &cpu, int64_t lanes);

/// The rows of a register tile of `vectors` vectors of columns whose accumulators fit the
/// registers beside the vectors and the lhs broadcast (at least 1).
int64_t matmulTileRows(int64_t vectors, const TargetCpu &cpu);

} // namespace loupe
