// FunctionCodegen: one lowered function's loop IR as LLVM IR — shared by the files of
// backend/llvm/ (it includes LLVM headers).
#pragma once

#include "backend/Codegen.h"
#include "backend/LowerFunction.h"

#include <llvm/IR/Module.h>

#include <string>

namespace loupe::backend {

/// Generates `f` into `m` as the function `symbol`, with `symbol_packed(void **args)` and the
/// outlined parallel bodies `symbol_parallel<k>(begin, end, closure)`. With `lines` (where each
/// statement starts in `f`'s listing: listLowered), the code carries debug locations whose line
/// is the listing line of the statement each instruction was made for, in a file named
/// `symbol.loops`; `:asm` and `:llvm` print through them. Compiled kernels are generated
/// without, so their machine code and cache keys do not depend on it.
void generateFunction(llvm::Module &m, const LoweredFunction &f, const std::string &symbol,
                      const loop::StmtLines *lines = nullptr);

/// Adds a weak `loupe_parallel_for(n, body, closure)` that runs every iteration as one share, so
/// that exported code works without the host's thread pool.
void addSerialParallelFor(llvm::Module &m);

} // namespace loupe::backend
