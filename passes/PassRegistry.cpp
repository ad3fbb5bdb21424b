// PassRegistry: storage and lookup of pass records, and the dependency-checking runner.
#include "passes/Pass.h"

#include "core/Error.h"

namespace loupe {

PassRegistry &PassRegistry::get() {
  static PassRegistry r;
  return r;
}

void PassRegistry::add(PassInfo p) {
  if (find(p.name))
    fail("internal: pass ", p.name, " registered twice");
  passes_.push_back(std::move(p));
}

const PassInfo *PassRegistry::find(const std::string &name) const {
  for (const auto &p : passes_)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::vector<const PassInfo *> PassRegistry::all() const {
  std::vector<const PassInfo *> v;
  for (const auto &p : passes_)
    v.push_back(&p);
  return v;
}

std::vector<std::string> PassRegistry::names() const {
  std::vector<std::string> v;
  for (const auto &p : passes_)
    v.push_back(p.name);
  return v;
}

std::vector<std::string> PassRegistry::providersOf(const std::string &attr) const {
  std::vector<std::string> v;
  for (const auto &p : passes_)
    for (const auto &a : p.provides)
      if (a == attr)
        v.push_back(p.name);
  return v;
}

const PassInfo &requirePass(const std::string &name) {
  const PassInfo *p = PassRegistry::get().find(name);
  if (!p)
    fail("unknown pass '", name, "'", didYouMean(name, PassRegistry::get().names()),
         "; :passes lists them");
  return *p;
}

Graph applyPasses(const Graph &g, const std::vector<std::string> &names, const PassContext &ctx) {
  std::vector<const PassInfo *> passes;
  for (const auto &n : names)
    passes.push_back(&requirePass(n)); // all names are checked before anything runs
  Graph cur = g;
  for (const PassInfo *p : passes) {
    for (const auto &need : p->needs)
      if (!cur.attr(need)) {
        auto prov = PassRegistry::get().providersOf(need);
        std::string by;
        for (const auto &q : prov)
          by += (by.empty() ? "" : " or ") + q;
        fail("Graph attr dependency ", need, " is required by pass ", p->name,
             " but is not available.",
             by.empty() ? "" : " The attribute is provided by pass " + by);
      }
    cur = p->run(cur, ctx);
  }
  return cur;
}

} // namespace loupe
