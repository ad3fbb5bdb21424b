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
  std::vector<PassInfo> passes;
  entry(passes);
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
    PassRegistry::get().add(std::move(p));
  }
  return added; // the library stays loaded for the life of the process
}

} // namespace loupe
