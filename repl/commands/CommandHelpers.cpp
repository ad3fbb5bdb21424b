// CommandHelpers: the small helpers the command files share (argument splitting, usage checks,
// step descriptions, name lists, an op's description, a compiled graph's functions).
#include "repl/commands/CommandHelpers.h"

#include "backend/BuiltLibrary.h"
#include "core/Error.h"
#include "core/Target.h"
#include "repl/Engine.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

// Splits command arguments at white space; quotes group words.
Args splitArgs(const std::string &s) {
  Args out;
  std::string cur;
  char quote = 0;
  bool have = false;
  for (char c : s) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      have = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (have)
        out.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (quote)
    fail("unterminated quote in command arguments");
  if (have)
    out.push_back(cur);
  return out;
}

// "a,b,c" -> {"a", "b", "c"} (empty pieces kept, so callers decide what they mean).
Args splitKeepingTuples(const std::string &s) {
  Args out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(' || c == '[')
      ++depth;
    if (c == ')' || c == ']')
      --depth;
    if (std::isspace(static_cast<unsigned char>(c)) && depth == 0) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

void needArgs(const Args &a, size_t lo, size_t hi, const std::string &usage) {
  if (a.size() < lo || a.size() > hi)
    fail("usage: ", usage);
}

// "graph unchanged; added shape, dtype" — what a step did, for `:apply` and `:history`.
std::string describeChange(const Graph *before, const Graph &after) {
  std::string s = !before                      ? "new graph"
                  : before->sameOutputs(after) ? "graph unchanged"
                                               : "graph changed";
  auto changes = diffAttrs(before ? before->attrs : GraphAttrs{}, after.attrs);
  for (auto [kind, word] : {std::pair{'+', "added"}, {'~', "changed"}, {'-', "removed"}}) {
    std::string keys;
    for (const auto &c : changes)
      if (c.kind == kind)
        keys += (keys.empty() ? "" : ", ") + c.key;
    if (!keys.empty())
      s += std::string("; ") + word + " " + keys;
  }
  return s;
}

// "the graph has no attribute 'shape'; it is provided by InferShape"
[[noreturn]] void missingAttr(const Graph &g, const std::string &key) {
  auto prov = PassRegistry::get().providersOf(key);
  fail("the graph has no attribute '", key, "'",
       prov.empty() ? didYouMean(key, orderedAttrKeys(g.attrs))
                    : "; it is provided by " + joinNames(prov, " or "));
}

int64_t integerAtLeast(const std::string &key, const std::string &v, int64_t min) {
  int64_t n = min - 1;
  try {
    size_t used = 0;
    n = std::stoll(v, &used);
    if (used != v.size())
      n = min - 1;
  } catch (const std::exception &) {
  }
  if (n < min)
    fail(key, " must be ", min == 0 ? "a non-negative" : "a positive", " integer, got '", v, "'");
  return n;
}

// The fused functions of a compiled graph in the order its tvm_op nodes call them.
std::vector<std::string> functionOrder(const Graph &g) {
  const GraphAttr *attr = g.attr("module");
  if (!attr)
    missingAttr(g, "module");
  std::vector<std::string> names;
  for (const auto &n : g.index().nodes)
    if (!n.node->isVariable() && n.node->op->name == "tvm_op") {
      std::string fn = n.node->parsed.getStr("func_name");
      if (std::find(names.begin(), names.end(), fn) == names.end())
        names.push_back(fn);
    }
  return names;
}

// A function of the graph's module by name; the error lists the ones there are.
const FusedFunction &findFunction(const Graph &g, const std::string &name) {
  const GraphAttr *attr = g.attr("module");
  if (!attr)
    missingAttr(g, "module");
  auto module = std::static_pointer_cast<const FusedModule>(attr->opaque);
  auto it = module->functions.find(name);
  if (it == module->functions.end()) {
    std::vector<std::string> fns = functionOrder(g);
    fail("the module has no function '", name, "'", didYouMean(name, fns),
         "; functions: ", joinNames(fns));
  }
  return *it->second;
}

std::optional<int> declaredDType(const Node &variable) {
  const std::string *dt = findAttr(variable.attrs, "dtype");
  if (!dt || dt->empty())
    return std::nullopt;
  if (std::all_of(dt->begin(), dt->end(), ::isdigit)) {
    int code = dt->size() < 4 ? std::stoi(*dt) : kNumDTypes;
    return code < kNumDTypes ? std::optional<int>(code) : std::nullopt;
  }
  return dtypeFromName(*dt);
}

// "16 nodes, 7 inputs, 1 output"
std::string graphSize(const IndexedGraph &idx) {
  return plural(idx.numNodes(), "node") + ", " + plural(idx.argNodes.size(), "input") + ", " +
         plural(idx.heads.size(), "output");
}

void printOpDetails(const OpDef &op, std::ostream &out) {
  out << op.name << ": " << op.doc << "\n";
  out << "  pattern: " << patternName(op.pattern) << " (" << op.pattern << ")\n";
  if (op.variadic)
    out << "  inputs:  any number, by position\n";
  else if (op.argsFn)
    out << "  inputs:  " << joinNames(op.args) << " (depends on attributes)\n";
  else
    out << "  inputs:  " << (op.args.empty() ? "none" : joinNames(op.args)) << "\n";
  if (op.numOutputsFn) {
    Attrs none;
    out << "  outputs: "
        << (op.name == "split" ? "one per part" : std::to_string(op.numOutputs(none))) << "\n";
  }
  if (!op.aliases.empty())
    out << "  aliases: " << joinNames(op.aliases) << "\n";
  for (const auto &p : op.params)
    out << "  " << pad(p.name, 16) << (p.dflt ? "= " + *p.dflt : "(required)") << "  " << p.doc
        << "\n";
}

backend::LoweredFunction builtOrLowered(const Graph &g, const std::string &name) {
  const FusedFunction &f = findFunction(g, name);
  if (auto lib = backend::builtLibrary(g))
    if (auto it = lib->lowered.find(name); it != lib->lowered.end())
      return it->second;
  return backend::lowerFunction(f);
}

void checkTarget(const std::string &target) {
  Args a = splitArgs(target);
  if (a.empty() || a[0] != "llvm")
    fail("target must be llvm (the host CPU), got '", target, "'");
  for (size_t i = 1; i < a.size(); ++i)
    if ((a[i].rfind("-mcpu=", 0) != 0 || a[i].size() == 6) &&
        (a[i].rfind("-mattr=", 0) != 0 || a[i].size() == 7))
      fail("target option '", a[i],
           "' is not supported; write llvm -mcpu=NAME [-mattr=+FEATURE,-FEATURE]");
  targetCpuOf(target); // a CPU LLVM does not know, or a malformed -mattr, is refused here
}

size_t stepArgument(const Engine &e, const std::string &a) {
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(a, &used);
  } catch (const std::exception &) {
  }
  if (used != a.size() || v < 0 || static_cast<size_t>(v) >= e.history().size())
    fail("no step '", a, "'; steps are 0 to ", e.history().size() - 1, " (:history lists them)");
  return static_cast<size_t>(v);
}

} // namespace loupe
