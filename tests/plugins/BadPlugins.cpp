// BadPlugins: plugins that go wrong, for the :load-pass error tests — built three times with
// BAD_PLUGIN set to WRONG_ABI (another ABI version), THROWING_ENTRY (loupe_register_passes
// throws) and THROWING_PASS (registers a pass that throws std::runtime_error when run).
#include "passes/Pass.h"

#include <stdexcept>

#if defined(WRONG_ABI)
extern "C" {
extern const int loupe_plugin_abi;
const int loupe_plugin_abi = loupe::kPluginAbiVersion + 100;
}
#else
LOUPE_PLUGIN_ABI
#endif

extern "C" void loupe_register_passes(std::vector<loupe::PassInfo> &passes) {
#if defined(THROWING_ENTRY)
  passes.push_back({.name = "NeverRegistered",
                    .summary = "",
                    .optLevel = 0,
                    .changesGraph = true,
                    .run = [](const loupe::Graph &g, const loupe::PassContext &) { return g; }});
  throw std::runtime_error("no license key");
#else
  passes.push_back({.name = "Throwing",
                    .summary = "throws std::runtime_error",
                    .optLevel = 0,
                    .changesGraph = true,
                    .run = [](const loupe::Graph &, const loupe::PassContext &) -> loupe::Graph {
                      throw std::runtime_error("the plugin's pass gave up");
                    }});
#endif
}
