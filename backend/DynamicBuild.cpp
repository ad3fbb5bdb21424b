// DynamicBuild: a symbolic graph's build, one variant per binding of its size symbols.
#include "backend/DynamicBuild.h"

#include "backend/tune/Records.h"
#include "core/Error.h"
#include "core/FusedModule.h"
#include "core/Json.h"
#include "core/Text.h"
#include "passes/Symbols.h"

#include <algorithm>
#include <cstring>

namespace loupe::backend {

DynamicBuild::DynamicBuild(Graph symbolic, BuildOptions options, PassContext context)
    : graph_(std::move(symbolic)), options_(std::move(options)), context_(std::move(context)),
      symbols_(graphSymbols(graph_)), scope_(hex16(saveJSON(graph_))) {
  bool generic = options_.generic;
  options_.generic = false;
  // The options outlive the command that gave them: what points into it is dropped, and the
  // params are kept here (shared, never copied element by element).
  params_ = options_.params.empty() && options_.sharedParams ? *options_.sharedParams
                                                             : storeAll(std::move(options_.params));
  options_.params.clear();
  options_.sharedParams = &params_;
  options_.progress = nullptr;
  options_.warnings = nullptr;
  options_.graphApply = nullptr;
  options_.lowered = nullptr;
  // Variants share their params' bytes: at opt_level 2 and 3 each build makes its own packed
  // weights, equal from size to size, and a network's weights held once per size would grow
  // with every size run (the dynamic encoder took 37 MB more per size). Runs under mutex_
  // (variant() builds while holding it).
  options_.shareParams = [this](StoredTensors &made) {
    for (auto &[name, t] : made) {
      std::vector<StoredTensor> &seen = madeParams_[name];
      auto same = std::find_if(seen.begin(), seen.end(), [&](const StoredTensor &s) {
        return s.dtype() == t.dtype() && s.shape() == t.shape() && s.numBytes() == t.numBytes() &&
               std::memcmp(s.bytes(), t.bytes(), t.numBytes()) == 0;
      });
      if (same != seen.end())
        t = *same;
      else
        seen.push_back(t);
    }
  };
  limits_ = sizeLimits(graph_);
  if (generic) {
    // Once, with generic kernels: every size a run gives that no variant was specialized for
    // runs this build, its kernels given the sizes.
    BuildOptions o = options_;
    o.symbolic = true;
    for (const auto &[name, shape] : symbolicInputs(graph_))
      o.shapes[name] = shape;
    try {
      generic_ = build(graph_, o, context_);
      // What its kernels assume of the sizes, for an export to check (DeployGraph).
      std::vector<std::string> limits;
      for (const SizeLimit &l : limits_)
        limits.push_back(l.size.str() + " <= " + l.limit.str());
      generic_->attrs["size_limits"] = GraphAttr::listStr(limits);
    } catch (const Error &err) {
      fail("build generic: ", err.what(),
           " (no generic kernel for it yet; :build without generic builds each size a run gives)");
    }
  }
}

Graph DynamicBuild::variant(const SymBindings &b, bool *built) const {
  if (generic_) {
    for (const std::string &s : symbols_)
      if (!b.count(s))
        fail("size symbol ", s, " is not bound");
    // The generic kernels would read past what a slice to a symbol assumes: refused by name.
    checkSizeLimits(limits_, b);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = variants_.find(b); it != variants_.end()) {
      if (built)
        *built = false;
      return it->second;
    }
    if (built)
      *built = false;
    return boundGeneric(*generic_, b);
  }
  return specialize(b, built);
}

Graph DynamicBuild::specialize(const SymBindings &b, bool *built) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = variants_.find(b); it != variants_.end()) {
    if (built)
      *built = false;
    return it->second;
  }
  for (const std::string &s : symbols_)
    if (!b.count(s))
      fail("size symbol ", s, " is not bound");
  checkSizeLimits(limits_, b);
  BuildOptions options = options_;
  options.sizeScope = scope_;
  options.sizes = b;
  Graph g = build(bindSymbols(graph_, b), options, context_);
  g.attrs["variant"] = GraphAttr::string(bindingsText(b)); // "batch=1, seq=64"
  g.attrs["variant_scope"] = GraphAttr::string(scope_);
  variants_[b] = g;
  if (built)
    *built = true;
  return g;
}

std::vector<SymBindings> DynamicBuild::variants() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SymBindings> out;
  for (const auto &[b, g] : variants_)
    out.push_back(b);
  return out;
}

bool DynamicBuild::has(const SymBindings &b) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return variants_.count(b) != 0;
}

void DynamicBuild::forget(const SymBindings &b) const {
  std::lock_guard<std::mutex> lock(mutex_);
  variants_.erase(b);
}

bool hasSizeSymbols(const Graph &g) { return !graphSymbols(g).empty(); }

Graph boundGeneric(const Graph &generic, const SymBindings &b) {
  Graph v = generic;
  std::vector<Shape> shapes = generic.attr("shape")->shapes;
  for (Shape &s : shapes)
    s = s.bound(b);
  v.attrs["shape"] = GraphAttr::listShape(shapes);
  // The functions' bodies bound too: the reference interpreter runs them at these sizes.
  if (const GraphAttr *m = generic.attr("module"); m && m->opaque) {
    auto module =
        std::make_shared<FusedModule>(*std::static_pointer_cast<const FusedModule>(m->opaque));
    for (auto &[name, f] : module->functions) {
      auto bound = std::make_shared<FusedFunction>(*f);
      std::vector<Shape> body = f->body.attr("shape")->shapes;
      for (Shape &s : body)
        s = s.bound(b);
      bound->body.attrs["shape"] = GraphAttr::listShape(body);
      f = bound;
    }
    GraphAttr a = *m;
    a.opaque = module;
    v.attrs["module"] = a;
  }
  v.attrs["variant"] = GraphAttr::string(bindingsText(b));
  v.attrs["generic_kernels"] = GraphAttr::string("1");
  return v;
}

Graph dynamicBuildGraph(const Graph &g, BuildOptions options, const PassContext &context) {
  Graph shaped = applyPasses(g, {"InferShape"}, context);
  auto dyn = std::make_shared<const DynamicBuild>(shaped, std::move(options), context);
  GraphAttr a;
  a.type = GraphAttr::Type::Opaque;
  a.str = "dynamic build";
  a.opaque = dyn;
  shaped.attrs["dynamic_build"] = a;
  return shaped;
}

std::shared_ptr<const DynamicBuild> dynamicBuild(const Graph &g) {
  const GraphAttr *a = g.attr("dynamic_build");
  if (!a || !a->opaque)
    return nullptr;
  return std::static_pointer_cast<const DynamicBuild>(a->opaque);
}

Graph variantOf(const Graph &g, const SymBindings &b, bool *built, bool specialized) {
  std::shared_ptr<const DynamicBuild> dyn = dynamicBuild(g);
  if (!dyn)
    fail("the graph is no dynamic build");
  Graph v = specialized ? dyn->specialize(b, built) : dyn->variant(b, built);
  v.attrs["dynamic_build"] = *g.attr("dynamic_build");
  return v;
}

SymBindings variantBindings(const Graph &g) {
  const GraphAttr *a = g.attr("variant");
  return a ? parseBindings(a->str) : SymBindings{};
}

} // namespace loupe::backend
