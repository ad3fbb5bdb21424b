// CodeCommands: the commands of what a build made of each function — :lower, :schedule, :llvm, :asm
// — and the machine and kernel cache it made it with (:target, :cache).
#include "backend/Build.h"
#include "backend/llvm/HostTarget.h"
#include "core/Error.h"
#include "core/Target.h"
#include "repl/commands/Commands.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace loupe {

namespace {

// The built library of the current graph, for :llvm and :asm; with a function name, checks that
// the graph has it (the error lists the functions).
std::shared_ptr<const backend::BuiltLibrary> builtCode(Engine &e, const Args &a,
                                                       const char *usage) {
  needArgs(a, 0, 1, usage);
  auto lib = backend::builtLibrary(e.requireGraph());
  if (!lib)
    fail("the current graph was not built; run :build first");
  if (a.size() == 1)
    findFunction(e.requireGraph(), a[0]); // the error lists the functions
  return lib;
}

} // namespace

void Commands::lower(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 1, ":lower [FUNC]");
  const Graph &g = e.requireGraph();
  std::vector<std::string> names = a.empty() ? functionOrder(g) : a;
  auto lib = backend::builtLibrary(g);
  for (const std::string &name : names) {
    backend::LoweredFunction f = builtOrLowered(g, name);
    out << "lower function " << name << "\n";
    if (std::string owner = lib ? lib->code->sharedWith(name) : ""; !owner.empty())
      out << "// runs the machine code of " << owner << " (the same loops, compiled once)\n";
    out << backend::printLowered(f);
  }
}

void Commands::schedule(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":schedule FUNC");
  backend::LoweredFunction f = builtOrLowered(e.requireGraph(), a[0]);
  std::string steps = f.schedule->describe();
  out << (steps.empty() ? "no schedule steps: every loop as computed\n" : steps);
}

void Commands::llvm(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  out << builtCode(e, a, ":llvm [FUNC]")->code->llvmIR(a.empty() ? "" : a[0]);
}

void Commands::assembly(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  out << builtCode(e, a, ":asm [FUNC]")->code->assembly(a.empty() ? "" : a[0]);
}

void Commands::target(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":target");
  backend::HostTarget t = backend::detectHostTarget();
  out << "llvm " << t.llvmVersion << "\ntriple " << t.triple << "\ncpu " << t.cpu << "\nsimd "
      << (t.simdFeatures.empty() ? "none" : joinNames(t.simdFeatures, " ")) << "\nl2 "
      << (t.l2Bytes ? std::to_string(t.l2Bytes >> 10) + " KiB per core (the OS's)" : "unknown")
      << "\n";
  // What opt_level 3 sizes its layouts and tiles for: the session's target when it names a
  // CPU, else this machine (a plain llvm target means the host at opt_level 3).
  std::string target = e.passContext_.get("target", "llvm");
  bool named = target.find("-mcpu=") != std::string::npos;
  std::string sized = named ? target : "llvm -mcpu=" + t.cpu;
  out << "opt_level 3 sizes for " << (named ? "the target " + target : "this machine") << ": "
      << targetCpuOf(sized).derivation << "\n";
}

void Commands::cache(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":cache");
  auto mb = [](uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return std::string(buf);
  };
  if (!e.kernelCache_) {
    out << "kernel cache off (:set cache on uses " << backend::KernelCache::defaultDir().string()
        << ")\n";
  } else {
    backend::KernelCache::Summary sum = e.kernelCache_->summary();
    out << "kernel cache " << e.kernelCache_->dir().string() << ": " << sum.entries
        << (sum.entries == 1 ? " entry, " : " entries, ") << mb(sum.bytes) << " (at most "
        << mb(e.kernelCache_->maxBytes()) << ")\n";
  }
  if (!e.lastCompile_) {
    out << "no build yet\n";
    return;
  }
  const backend::CompileStats &s = *e.lastCompile_;
  out << "last build: " << plural(s.functions, "function") << ", "
      << plural(s.distinct, "distinct kernel");
  if (!s.cacheUsed) {
    out << ", all compiled (cache off)\n";
    return;
  }
  out << ": " << s.cacheHits << " from the cache, " << s.distinct - s.cacheHits
      << " compiled (hit rate " << (s.distinct ? 100 * s.cacheHits / s.distinct : 100) << "%), "
      << s.cacheStored << " stored\n";
}

} // namespace loupe
