// Codegen: lowered functions compiled for the host CPU by LLVM (new pass manager at O3, ORC
// LLJIT), callable in-process, printable as LLVM IR and assembly, exportable as an object file
// or a shared library. LLVM headers stay in CodegenLLVM.cpp.
#pragma once

#include "backend/LowerFunction.h"

#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// Compiled functions. Each function `f` takes its buffers as pointers — inputs in argument
/// order, then outputs — as `void f(T0 *, T1 *, …)`; `f_packed(void **args)` takes them as one
/// array.
class CompiledModule {
public:
  /// Generates, verifies, optimises and JIT-compiles the functions. Throws Error with LLVM's
  /// verifier message when the generated IR is invalid (never crashes on it).
  static std::unique_ptr<CompiledModule> compile(const std::vector<LoweredFunction> &fns);
  ~CompiledModule();

  /// Calls a function with its buffers (inputs, then outputs).
  void call(const std::string &name, const std::vector<void *> &args) const;
  /// The packed entry point of a function (`f_packed(void **args)`); throws Error if absent.
  void (*packed(const std::string &name) const)(void **);
  /// Names of the compiled functions.
  std::vector<std::string> functions() const;
  /// The optimised LLVM IR of one function (or the whole module for "").
  std::string llvmIR(const std::string &name = "") const;
  /// The host assembly of one function (or the whole module for "").
  std::string assembly(const std::string &name = "") const;
  /// Writes the module as a relocatable (position-independent) object file for the host. It
  /// carries a weak, serial `loupe_parallel_for`, so a shared library made from it works on its
  /// own and uses the host's thread pool when the host process defines one.
  void writeObject(const std::string &path) const;
  /// Writes a C header declaring each function (`void f(float *input0, …, float *out);`).
  std::string cHeader() const;

private:
  CompiledModule();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace loupe::backend
