// LLVM outside backend/llvm.
#include <llvm/IR/Module.h>
