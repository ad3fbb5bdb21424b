// Target: the LLVM target machine Loupe compiles for (the host), the O3 pipeline, and the
// machine-code emitters; shared by the files of backend/llvm/ (it includes LLVM headers).
#pragma once

#include "core/Error.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

namespace loupe::backend {

/// LLVM's message for an error.
std::string llvmMessage(llvm::Error e);

/// The value of `v`, or an Error naming `what` with LLVM's message.
template <typename T> T check(llvm::Expected<T> v, const char *what) {
  if (!v)
    fail(what, ": ", llvmMessage(v.takeError()));
  return std::move(*v);
}

/// The host target machine's builder, as every kernel is compiled for it (O3, position
/// independent so that the same code can go into a shared library).
llvm::orc::JITTargetMachineBuilder hostBuilder();

/// A target machine of the host's (a copy of the builder per call: threads make their own).
std::unique_ptr<llvm::TargetMachine> targetMachine(llvm::orc::JITTargetMachineBuilder jtmb);

/// What besides its IR decides a kernel's machine code: the triple, CPU, features, and the
/// LLVM, Loupe and code-generation versions.
std::string targetDescription(const llvm::orc::JITTargetMachineBuilder &jtmb);

/// An empty module for the host.
std::unique_ptr<llvm::Module> hostModule(llvm::LLVMContext &ctx, const llvm::TargetMachine &tm);

/// Throws Error with LLVM's verifier message when `m` is invalid.
void verify(const llvm::Module &m);

/// O3 for the host, with the target's cost model for vectorisation; below opt level 3 (`fast`
/// false) the loop vectoriser only takes the loops the schedule marked.
void optimize(llvm::Module &m, llvm::TargetMachine &tm, bool fast);

/// Machine code (an object file or assembly text) for a module.
std::string emit(llvm::Module &m, llvm::TargetMachine &tm, llvm::CodeGenFileType type);

} // namespace loupe::backend
