// LoadJSON: rebuilds a graph from the NNVM JSON held in the `json` attribute.
#include "passes/Pass.h"

#include "core/Json.h"

namespace loupe {

void registerLoadJSONPass() {
  PassRegistry::get().add(
      {"LoadJSON",
       "rebuilds the graph from the NNVM JSON in graph attr 'json'",
       0,
       {"json"},
       {},
       true,
       [](const Graph &g, const PassContext &) { return loadJSON(g.attr("json")->str, "json"); }});
}

} // namespace loupe
