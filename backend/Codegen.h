// Codegen: lowered functions compiled for the host CPU by LLVM (new pass manager at O3, ORC
// LLJIT), callable in-process, printable as LLVM IR and assembly, exportable as an object file
// or a shared library. Implemented in backend/llvm/, the only files with LLVM headers.
#pragma once

#include "backend/KernelCache.h"
#include "backend/LowerFunction.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loupe::backend {

/// The dot-product instructions generated code may use for `dot4`: VNNI's vpdpbusd on 16 int32
/// lanes (avx512vnni) and on 8 (avxvnni, or avx512vnni with avx512vl), as the host has them —
/// code is always compiled for the host; without VNNI, vpmaddwd's pairs of 16-bit products on
/// 16 lanes (avx512bw) and on 8 (avx2).
struct DotInstructions {
  bool lanes16 = false;
  bool lanes8 = false;
  bool pairs16 = false;
  bool pairs8 = false;
};
DotInstructions dotInstructions();

/// Overrides dotInstructions() (nullopt: the host's again) — for tests that check the portable
/// form of dot4 on a machine with VNNI. Kernels compiled since keep their code.
void setDotInstructions(std::optional<DotInstructions> d);

/// What a compile did, and how far it is while it runs.
struct CompileStats {
  size_t functions = 0;   ///< functions in the build
  size_t distinct = 0;    ///< distinct kernels among them: functions with the same loops share one
  size_t done = 0;        ///< distinct kernels compiled (or loaded from the cache) so far
  size_t cacheHits = 0;   ///< distinct kernels loaded from the kernel cache
  size_t cacheStored = 0; ///< compiled kernels written to the cache
  bool cacheUsed = false; ///< whether a cache was given
};

/// How CompiledModule::compile works.
struct CompileOptions {
  int threads = 0; ///< compile threads; 0 means numThreads() (LOUPE_NUM_THREADS)
  /// Where compiled kernels are looked up before compiling and stored after (none: off).
  const KernelCache *cache = nullptr;
  /// Called after each distinct kernel is done, one call at a time, from whichever thread
  /// finished it.
  std::function<void(const CompileStats &)> progress;
};

/// Compiled functions. Each function `f` takes its buffers as pointers — inputs in argument
/// order, then outputs — as `void f(T0 *, T1 *, …)`; `f_packed(void **args)` takes them as one
/// array.
class CompiledModule {
public:
  /// Generates, verifies, optimises and JIT-compiles the functions. Functions whose generated
  /// code is the same apart from their names (the same loops and dtypes) are compiled once and
  /// share the machine code; distinct ones are compiled in parallel, each in an LLVM context of
  /// its own. The result does not depend on the thread count. Throws Error with LLVM's verifier
  /// message when the generated IR is invalid (never crashes on it), for the first such
  /// function in `fns`' order.
  static std::unique_ptr<CompiledModule> compile(const std::vector<LoweredFunction> &fns,
                                                 const CompileOptions &options = {});
  ~CompiledModule();

  /// Calls a function with its buffers (inputs, then outputs).
  void call(const std::string &name, const std::vector<void *> &args) const;
  /// The packed entry point of a function (`f_packed(void **args)`); throws Error if absent.
  void (*packed(const std::string &name) const)(void **);
  /// Names of the compiled functions.
  std::vector<std::string> functions() const;
  /// The earlier function whose machine code `name` runs (the same loops), or "" when `name`
  /// has code of its own.
  std::string sharedWith(const std::string &name) const;
  /// What the compile did.
  const CompileStats &stats() const;
  /// The optimised LLVM IR of one function (or the whole module for ""), generated again on
  /// first use under the function's own name (with the comments `assembly` describes).
  std::string llvmIR(const std::string &name = "") const;
  /// The host assembly of one function (or of each function in turn for ""), with comments
  /// naming the line of its loop listing (listLowered) and the graph nodes each run of
  /// instructions was generated for; its LLVM IR carries the same.
  std::string assembly(const std::string &name = "") const;
  /// The whole module's host assembly as it is compiled: no debug locations, no comments.
  std::string moduleAssembly() const;
  /// The listing line each machine instruction of `name`'s host assembly (its parallel bodies
  /// included) was generated for, in the assembly's order; 0 for none (a prologue).
  std::vector<unsigned> instructionLines(const std::string &name) const;
  /// Writes the module as a relocatable (position-independent) object file for the host. It
  /// carries a weak, serial `loupe_parallel_for`, so a shared library made from it works on its
  /// own and uses the host's thread pool when the host process defines one.
  void writeObject(const std::string &path) const;
  /// Writes a C header declaring each function (`void f(float *input0, …, float *out);`).
  std::string cHeader() const;

private:
  CompiledModule();
  std::string sharedNote(const std::string &name, const char *comment) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace loupe::backend
