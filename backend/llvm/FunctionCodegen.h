// FunctionCodegen: one lowered function's loop IR as LLVM IR — shared by the files of
// backend/llvm/ (it includes LLVM headers).
#pragma once

#include "backend/LowerFunction.h"

#include <llvm/IR/Module.h>

#include <string>

namespace loupe::backend {

/// Generates `f` into `m` as the function `symbol`, with `symbol_packed(void **args)` and the
/// outlined parallel bodies `symbol_parallel<k>(i, closure)`.
void generateFunction(llvm::Module &m, const LoweredFunction &f, const std::string &symbol);

/// Adds a weak `loupe_parallel_for(n, body, closure)` that runs the bodies in order, so that
/// exported code works without the host's thread pool.
void addSerialParallelFor(llvm::Module &m);

} // namespace loupe::backend
