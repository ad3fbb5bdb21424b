// Target: what the opt_level 3 layouts and schedules need to know of a target string's CPU.
#pragma once

#include <cstdint>
#include <string>

namespace loupe {

/// The CPU of a target as the blocked layouts and register tiles see it.
struct TargetCpu {
  int64_t vectorBytes = 32;    ///< bytes per vector register (32 for AVX2, 64 for AVX-512)
  int64_t registers = 16;      ///< vector registers (16 ymm for AVX2, 32 zmm for AVX-512)
  int64_t l2Bytes = 512 << 10; ///< one core's L2, which a tile's reused weights must fit in
  /// Whether an FMA can read a scalar broadcast from memory (AVX-512's `{1to16}`); without it
  /// (AVX2) every broadcast input occupies a register while it is used.
  bool broadcastOperand = false;

  /// Lanes of one vector register for elements of `elementBytes`.
  int64_t lanes(int64_t elementBytes) const { return vectorBytes / elementBytes; }
};

/// The CPU of a target string ("llvm -mcpu=NAME"): with AVX-512F (TVM knew skylake-avx512; the
/// later ones are here too, so that a host-tuned build uses their full width) 64-byte vectors,
/// 32 registers, a 1 MB L2 and broadcast operands; otherwise AVX2's 32-byte vectors and 16
/// registers with a 512 KB L2 (Zen 2 and 3). The target, not the machine running Loupe, decides, so
/// that what a session prints is the same on any machine; the code is always compiled for the host.
TargetCpu targetCpuOf(const std::string &target);

} // namespace loupe
