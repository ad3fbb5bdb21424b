// SourceLines: LLVM IR and host assembly with comments naming the loop-listing line and graph
// nodes each run of instructions was generated for (from the debug locations FunctionCodegen
// writes when given a listing's lines); shared by the files of backend/llvm/.
#pragma once

#include "backend/LowerFunction.h"

#include <llvm/IR/Module.h>

#include <string>
#include <vector>

namespace loupe::backend {

/// The comment for listing line `line`: `line 12: <its text, shortened> [node, …]`.
std::string listingNote(const LoweredListing &l, unsigned line);

/// The functions of `m` (their packed wrappers left out) as LLVM IR, each run of instructions
/// from one listing line under a `; line N: …` comment, the debug metadata itself not printed.
std::string annotatedIR(const llvm::Module &m, const LoweredListing &l);

/// Host assembly with its debug directives turned into comments.
struct AnnotatedAssembly {
  std::string text; ///< each `.loc` that changes the line as `# line N: …`; debug sections gone
  /// For each instruction, in the text's order, the listing line it was generated for (0: no
  /// statement, such as a prologue).
  std::vector<unsigned> instructionLines;
  /// Instructions from a listing line that computes nodes (every statement but a bare
  /// attribute does): what the comments can name.
  size_t traced = 0;
  /// Instructions inside the machine code's loops (from a backward jump's target to the jump),
  /// and how many of them are traced.
  size_t loopInstructions = 0, loopTraced = 0;
  /// Instructions with no line of their own given their machine loop's statement.
  size_t byLoop = 0;
};

/// Turns assembly emitted with debug locations into the annotated form.
AnnotatedAssembly annotateAssembly(const std::string &assembly, const LoweredListing &l);

} // namespace loupe::backend
