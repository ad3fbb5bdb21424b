// PassRegistry: storage and lookup of pass records, and the dependency-checking runner.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Interrupt.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace loupe {

int PassContext::getInt(const std::string &pass, const std::string &key, int dflt, int lo,
                        int hi) const {
  auto it = config.find(key);
  if (it == config.end())
    return dflt;
  const std::string &v = it->second;
  long long n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < lo || n > hi)
    fail(pass, ": ", key, " must be an integer from ", lo, " to ", hi, ", got '", v, "'");
  return static_cast<int>(n);
}

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

namespace {

// Relay passes that have nothing to work on in NNVM's dataflow graph: asking for one explains
// why instead of calling it unknown (and instead of a pass that would always do nothing).
std::string notApplicable(const std::string &name) {
  if (name == "DeadCodeElimination")
    return "DeadCodeElimination has nothing to remove here: Relay's pass drops unused "
           "let-bindings, and a graph holds only the nodes its outputs reach (a node nobody "
           "reads is not part of it)";
  return "";
}

} // namespace

const PassInfo &requirePass(const std::string &name) {
  const PassInfo *p = PassRegistry::get().find(name);
  if (!p && !notApplicable(name).empty())
    fail(notApplicable(name));
  if (!p)
    fail("unknown pass '", name, "'", didYouMean(name, PassRegistry::get().names()),
         "; :passes lists them");
  return *p;
}

void checkNeeds(const Graph &g, const PassInfo &p) {
  for (const auto &need : p.needs)
    validateGraphAttr(g, need); // a list that does not fit the graph is refused before use
  for (const auto &need : p.needs)
    if (!g.attr(need)) {
      std::string by;
      for (const auto &q : PassRegistry::get().providersOf(need))
        by += (by.empty() ? "" : " or ") + q;
      fail("Graph attr dependency ", need, " is required by pass ", p.name,
           " but is not available.", by.empty() ? "" : " The attribute is provided by pass " + by);
    }
}

Graph runPass(const Graph &g, const PassInfo &p, const PassContext &ctx) {
  checkInterrupt(); // Ctrl-C stops a pipeline between passes
  bool run = true;
  if (!ctx.instruments.empty() && !ctx.requiredPass.count(p.name))
    for (const auto &inst : ctx.instruments)
      run = inst->shouldRun(g, p) && run; // every hook is called, results ANDed
  if (!run)
    return g;
  checkNeeds(g, p);
  for (const auto &inst : ctx.instruments)
    inst->beforePass(g, p);
  Graph out = p.run(g, ctx);
  for (const auto &inst : ctx.instruments)
    inst->afterPass(g, out, p);
  return out;
}

Graph applyPasses(const Graph &g, const std::vector<std::string> &names, const PassContext &ctx) {
  std::vector<const PassInfo *> passes;
  for (const auto &n : names)
    passes.push_back(&requirePass(n)); // all names are checked before anything runs
  Graph cur = g;
  for (const PassInfo *p : passes)
    cur = runPass(cur, *p, ctx);
  return cur;
}

bool passEnabled(const PassInfo &p, const PassContext &ctx, std::string *reason) {
  auto say = [&](bool v, std::string r) {
    if (reason)
      *reason = std::move(r);
    return v;
  };
  if (ctx.disabledPass.count(p.name))
    return say(false, p.name + " is in disabled_pass (disabled wins)");
  if (ctx.requiredPass.count(p.name))
    return say(true, p.name + " is in required_pass");
  if (ctx.optLevel >= p.optLevel)
    return say(true, cat("opt_level ", ctx.optLevel, " >= ", p.name, "'s level ", p.optLevel));
  return say(false, cat("opt_level ", ctx.optLevel, " < ", p.name, "'s level ", p.optLevel));
}

PassInfo sequentialPass(std::vector<PipelineEntry> entries, std::string name, int optLevel,
                        std::vector<std::string> required, PassResolver resolve) {
  // A Sequential is itself a pass, so instruments see it around its children (relay-spec §1.2).
  return {.name = std::move(name),
          .summary = "a pipeline of passes",
          .optLevel = optLevel,
          .changesGraph = true,
          .run =
              [entries = std::move(entries), resolve = std::move(resolve)](const Graph &in,
                                                                           const PassContext &c) {
                Graph cur = in;
                for (const auto &e : entries) {
                  if (!passEnabled(*e.pass, c))
                    continue; // no instrument hears about it
                  for (const auto &r : e.pass->required)
                    cur = runPass(cur, resolve(r), c);
                  if (e.options.empty()) {
                    cur = runPass(cur, *e.pass, c);
                  } else {
                    PassContext local = c;
                    for (const auto &[k, v] : e.options)
                      local.config[k] = v;
                    cur = runPass(cur, *e.pass, local);
                  }
                }
                return cur;
              },
          .required = std::move(required)};
}

Graph runSequential(const Graph &g, const std::vector<PipelineEntry> &entries,
                    const PassContext &ctx) {
  return runPass(g, sequentialPass(entries), ctx);
}

std::vector<PipelineEntry> parsePipeline(const std::string &text) {
  std::vector<PipelineEntry> out;
  size_t i = 0, n = text.size();
  auto col = [&](size_t at) { return cat("column ", at + 1); };
  auto skipSpace = [&] {
    while (i < n && (text[i] == ' ' || text[i] == '\t'))
      ++i;
  };
  auto word = [&] {
    size_t start = i;
    while (i < n && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' ||
                     text[i] == '.' || text[i] == '-'))
      ++i;
    return text.substr(start, i - start);
  };
  while (true) {
    skipSpace();
    size_t at = i;
    std::string name = word();
    if (name.empty())
      fail("pipeline: expected a pass name at ", col(at), " of '", text, "'");
    const PassInfo *p = PassRegistry::get().find(name);
    if (!p && !notApplicable(name).empty())
      fail("pipeline: ", notApplicable(name));
    if (!p)
      fail("pipeline: unknown pass '", name, "' at ", col(at),
           didYouMean(name, PassRegistry::get().names()));
    PipelineEntry e{p, {}};
    skipSpace();
    if (i < n && text[i] == '(') {
      ++i;
      while (true) {
        skipSpace();
        size_t kat = i;
        std::string key = word();
        skipSpace();
        if (key.empty() || i >= n || text[i] != '=')
          fail("pipeline: expected option=value at ", col(kat), " of '", text, "'");
        ++i;
        skipSpace();
        std::string value = word();
        if (value.empty())
          fail("pipeline: expected a value at ", col(i), " of '", text, "'");
        if (std::find(p->options.begin(), p->options.end(), key) == p->options.end()) {
          std::string list;
          for (const auto &o : p->options)
            list += (list.empty() ? "" : ", ") + o;
          fail("pipeline: ", name, " has no option '", key, "'", didYouMean(key, p->options),
               p->options.empty() ? std::string("; it takes none") : "; options: " + list);
        }
        e.options[key] = value;
        skipSpace();
        if (i < n && text[i] == ',') {
          ++i;
          continue;
        }
        if (i < n && text[i] == ')') {
          ++i;
          break;
        }
        fail("pipeline: expected ',' or ')' at ", col(i), " of '", text, "'");
      }
    }
    out.push_back(std::move(e));
    skipSpace();
    if (i >= n)
      return out;
    if (text[i] != ',')
      fail("pipeline: expected ',' between passes at ", col(i), " of '", text, "'");
    ++i;
  }
}

} // namespace loupe
