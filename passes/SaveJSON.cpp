// SaveJSON: serialises the graph into the `json` attribute of an otherwise empty graph.
#include "passes/Pass.h"

#include "core/Json.h"

namespace loupe {

void registerSaveJSONPass() {
  PassRegistry::get().add({.name = "SaveJSON",
                           .summary = "writes the graph as NNVM JSON into graph attr 'json'",
                           .optLevel = 0,
                           .provides = {"json"},
                           .changesGraph = true,
                           .run = [](const Graph &g, const PassContext &) {
                             Graph out;
                             out.attrs["json"] = GraphAttr::string(saveJSON(g));
                             return out;
                           }});
}

} // namespace loupe
