// HostTarget: host detection through llvm::sys (keeps LLVM headers inside backend/).
#include "backend/llvm/HostTarget.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

namespace loupe::backend {

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
  return t;
}

} // namespace loupe::backend
