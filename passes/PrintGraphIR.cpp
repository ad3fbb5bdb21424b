// PrintGraphIR: stores the PrintGraphIR text in the `graphir` attribute of an empty graph.
#include "passes/Pass.h"

#include "core/Printer.h"

namespace loupe {

void registerPrintGraphIRPass() {
  PassRegistry::get().add({.name = "PrintGraphIR",
                           .summary = "prints the graph as text into graph attr 'graphir'",
                           .optLevel = 0,
                           .provides = {"graphir"},
                           .changesGraph = true,
                           .run = [](const Graph &g, const PassContext &) {
                             std::vector<std::string> join;
                             if (const GraphAttr *j = g.attr("join_entry_attrs"))
                               join = j->strs;
                             Graph plain = g;
                             plain.attrs.erase("join_entry_attrs"); // consumed, as in NNVM
                             Graph out;
                             out.attrs["graphir"] = GraphAttr::string(printGraphIR(plain, join));
                             return out;
                           }});
}

} // namespace loupe
