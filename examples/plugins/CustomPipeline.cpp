// CustomPipeline: seed 003's user-defined function pass as a Loupe plugin — every constant c
// becomes c * multiplier. Build it outside the tree with
//   g++ -std=c++20 -fPIC -shared -I<loupe source dir> CustomPipeline.cpp -o CustomPipeline.so
// and load it with `:load-pass ./CustomPipeline.so`; then `:pipeline CustomPipeline(multiplier=3)`.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Rewrite.h"

namespace {

using namespace loupe;

Graph customPipeline(const Graph &src, const PassContext &ctx) {
  std::string multiplier = ctx.get("multiplier", "3");
  const OpDef &mul = *OpRegistry::get().find("__mul_scalar__");
  Graph out = rewriteGraph(src, [&](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable() || node->op->name != "const")
      return {};
    return {{makeOpNode(mul, node->name + "_mul", {{"scalar", multiplier}}, {{node, 0, 0}}), 0, 0}};
  });
  // A function pass re-types its result, as Relay's do.
  return runPass(out, requirePass("InferType"), ctx);
}

} // namespace

LOUPE_PLUGIN_ABI

extern "C" void loupe_register_passes(std::vector<loupe::PassInfo> &passes) {
  passes.push_back({.name = "CustomPipeline",
                    .summary = "multiplies every constant by `multiplier` (seed 003's example)",
                    .optLevel = 1,
                    .changesGraph = true,
                    .run = customPipeline,
                    .options = {"multiplier"}});
}
