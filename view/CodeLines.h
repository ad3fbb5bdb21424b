// CodeLines: a fused function's numbered loops (`:lower FUNC nodes`) and commented assembly
// (`:asm FUNC`) as rows that know their listing line and graph nodes, so that the Loops panel
// can highlight what a node computes in both, and a clicked row can name its node.
#pragma once

#include <string>
#include <vector>

namespace loupe::gui {

/// One row of a listing: its text and what it was made for.
struct CodeRow {
  std::string text; ///< the row as printed (a loop row without its number)
  int line = 0;     ///< the listing line it is (loops) or comes from (assembly); 0: none
  std::vector<std::string> nodes; ///< the nodes that line computes (marked stores; assembly: the
                                  ///< comment's nodes, `+N more` left out)
  bool comment = false;           ///< an assembly comment naming the line (`# line 12: …`)
};

/// The rows of `:lower FUNC nodes` (after its `lower function` header lines).
std::vector<CodeRow> loopRows(const std::string &listing);

/// The rows of `:asm FUNC`: each instruction carries the line and nodes of the last `# line`
/// comment above it in its function (none before the first, and again at each new function).
std::vector<CodeRow> assemblyRows(const std::string &assembly);

/// Whether row `r` is one of `node`'s: a marked line that computes it, or an instruction from one.
bool rowOf(const CodeRow &r, const std::string &node);

} // namespace loupe::gui
