// PassPlugin: loading user-written passes from shared libraries (`:load-pass`).
#include "passes/Pass.h"

#include "core/Error.h"

#include <dlfcn.h>

#include <set>

namespace loupe {

std::vector<std::string> loadPassPlugin(const std::string &path, const std::string &shown) {
  // RTLD_NOW reports missing symbols here rather than at the first call.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = dlerror();
    if (why.rfind(path + ": ", 0) == 0) // dlerror repeats the path; keep the reason
      why = why.substr(path.size() + 2);
    fail("cannot load plugin ", shown, ": ", why);
  }
  auto entry = reinterpret_cast<RegisterPassesFn>(dlsym(handle, "loupe_register_passes"));
  if (!entry) {
    dlclose(handle);
    fail("plugin ", shown, " has no loupe_register_passes entry point");
  }
  auto *abi = static_cast<const int *>(dlsym(handle, "loupe_plugin_abi"));
  if (!abi || *abi != kPluginAbiVersion) {
    std::string had = abi ? "plugin ABI " + std::to_string(*abi) : "no plugin ABI version";
    dlclose(handle);
    fail("plugin ", shown, " was built against other Loupe headers (", had, "; this Loupe has ",
         kPluginAbiVersion, "): rebuild it, with LOUPE_PLUGIN_ABI in its source");
  }
  std::vector<PassInfo> passes;
  try {
    entry(passes);
  } catch (const std::exception &e) {
    fail("plugin ", shown, ": loupe_register_passes threw: ", e.what(), "; nothing was registered");
  } catch (...) {
    fail("plugin ", shown, ": loupe_register_passes threw; nothing was registered");
  }
  std::set<std::string> names;
  for (const auto &p : passes) {
    std::string why = p.name.empty()                     ? "a pass without a name"
                      : !p.run                           ? "pass " + p.name + " has no function"
                      : PassRegistry::get().find(p.name) ? "pass " + p.name + " already exists"
                      : !names.insert(p.name).second     ? "pass " + p.name + " appears twice"
                                                         : "";
    if (!why.empty()) {
      // The plugin stays loaded: its functions may already be referenced by nothing, but
      // unloading code that handed us std::function objects is not safe.
      fail("plugin ", shown, ": ", why, "; nothing was registered");
    }
  }
  if (passes.empty())
    fail("plugin ", shown, " registered no passes");
  std::vector<std::string> added;
  for (auto &p : passes) {
    added.push_back(p.name);
    // A plugin's failure is the plugin's: an exception other than Error becomes one that names
    // the pass and the plugin (the workbench would call it an internal error of its own).
    p.run = [run = std::move(p.run), name = p.name, shown](const Graph &g,
                                                           const PassContext &ctx) -> Graph {
      try {
        return run(g, ctx);
      } catch (const Error &) {
        throw;
      } catch (const std::exception &e) {
        fail("pass ", name, " (plugin ", shown, ") failed: ", e.what());
      } catch (...) {
        fail("pass ", name, " (plugin ", shown, ") failed with an unknown exception");
      }
    };
    PassRegistry::get().add(std::move(p));
  }
  return added; // the library stays loaded for the life of the process
}

} // namespace loupe
