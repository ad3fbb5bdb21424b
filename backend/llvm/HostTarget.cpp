// HostTarget: host detection through llvm::sys and LLVM's X86 CPU tables, and the L2 from sysfs
// (keeps LLVM headers inside backend/llvm/).
#include "backend/llvm/HostTarget.h"

#include "core/Target.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

namespace loupe::backend {

namespace {

// One core's L2 from sysfs (the cache of level 2 that is unified or data), else sysconf's.
int64_t osL2Bytes() {
  for (int i = 0; i < 8; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size");
    int l = 0;
    std::string t, s;
    if (!(level >> l) || !(type >> t) || !(size >> s))
      continue;
    if (l != 2 || t == "Instruction" || s.empty())
      continue;
    int64_t v = std::stoll(s);
    char unit = s.back();
    return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
  }
  long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return v > 0 ? v : 0;
}

} // namespace

HostTarget detectHostTarget() {
  HostTarget t;
  t.llvmVersion = LLVM_VERSION_STRING;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (const char *f : {"sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                        "avx512vnni", "avx512bf16", "amx-tile"})
    if (auto it = features.find(f); it != features.end() && it->second)
      t.simdFeatures.emplace_back(f);
  for (const auto &f : features)
    if (f.second)
      t.features.push_back(f.first().str());
  std::sort(t.features.begin(), t.features.end());
  t.l2Bytes = osL2Bytes();
  return t;
}

bool codegenHas(const std::string &feature) {
  static const std::vector<std::string> f = codegenTarget().features; // sorted
  return std::binary_search(f.begin(), f.end(), feature);
}

HostTarget codegenTarget() {
  static const HostTarget target = [] {
    HostTarget h = detectHostTarget();
    const char *name = std::getenv("LOUPE_CODEGEN_CPU");
    if (!name || !*name)
      return h;
    std::optional<std::vector<std::string>> f = cpuFeaturesOf(name);
    // The instruction sets kernels may use must be the host's; system features (rdseed, pku,
    // x87, …), which a virtual machine may not report, are not emitted in kernels.
    auto computes = [](const std::string &x) {
      for (const char *prefix :
           {"avx", "sse", "ssse3", "fma", "f16c", "bmi", "amx", "gfni", "vaes", "vpclmulqdq",
            "popcnt", "lzcnt", "movbe", "adx", "aes", "pclmul", "sha", "xop", "cx16"})
        if (x.rfind(prefix, 0) == 0)
          return true;
      return false;
    };
    std::string missing;
    for (const std::string &x : f ? *f : std::vector<std::string>{})
      if (computes(x) && !std::binary_search(h.features.begin(), h.features.end(), x))
        missing += (missing.empty() ? "" : ", ") + x;
    if (!f || !missing.empty()) {
      std::fprintf(stderr, "warning: LOUPE_CODEGEN_CPU=%s %s; compiling for this machine\n", name,
                   f ? ("needs what this machine lacks: " + missing).c_str()
                     : "is a CPU LLVM does not know");
      return h;
    }
    h.cpu = name;
    h.features = *f;
    std::vector<std::string> simd;
    for (const std::string &x : h.simdFeatures)
      if (std::binary_search(f->begin(), f->end(), x))
        simd.push_back(x);
    h.simdFeatures = simd;
    return h;
  }();
  return target;
}

std::optional<std::vector<std::string>> cpuFeaturesOf(const std::string &cpu) {
  if (llvm::X86::parseArchX86(cpu) == llvm::X86::CK_None)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 64> features;
  llvm::X86::getFeaturesForCPU(cpu, features);
  std::vector<std::string> out;
  for (llvm::StringRef f : features)
    out.push_back(f.str());
  std::sort(out.begin(), out.end());
  return out;
}

void installTargetInfo() {
  static std::once_flag once;
  std::call_once(once, [] {
    setCpuFeatureSource(cpuFeaturesOf);
    // LOUPE_HOST_CPU=NAME sizes "this machine" as the CPU NAME of LLVM's tables with its class's
    // L2, whatever the host is, so that a test suite checks the same schedules on any machine
    // (code generation still targets the real host).
    if (const char *pinned = std::getenv("LOUPE_HOST_CPU"); pinned && *pinned) {
      if (std::optional<std::vector<std::string>> f = cpuFeaturesOf(pinned)) {
        setHostCpu({pinned, *f, assumedL2(*f)});
        return;
      }
      std::fprintf(stderr,
                   "warning: LOUPE_HOST_CPU=%s is a CPU LLVM does not know; sizing for "
                   "this machine\n",
                   pinned);
    }
    HostTarget h = detectHostTarget();
    setHostCpu({h.cpu, h.features, h.l2Bytes > 0 ? h.l2Bytes : assumedL2(h.features)});
  });
}

} // namespace loupe::backend
