// Target: the CPU of a target string, as opt_level 3's layouts and schedules size for it.
#include "core/Target.h"

namespace loupe {

TargetCpu targetCpuOf(const std::string &target) {
  static const char *const avx512Cpus[] = {
      "skylake-avx512", "cascadelake", "cooperlake",     "cannonlake",    "icelake-client",
      "icelake-server", "tigerlake",   "sapphirerapids", "emeraldrapids", "graniterapids",
      "znver4",         "znver5",      "x86-64-v4"};
  size_t at = target.find("-mcpu=");
  if (at != std::string::npos) {
    std::string cpu = target.substr(at + 6, target.find(' ', at) - (at + 6));
    for (const char *c : avx512Cpus)
      if (cpu == c)
        return {64, 32, 1 << 20, true};
  }
  return {};
}

} // namespace loupe
