// Commands: the `:command` table of the workbench — one entry per command with its usage,
// a one-line summary and its handler.
#include "backend/Build.h"
#include "backend/HostTarget.h"
#include "backend/KernelCache.h"
#include "backend/LowerFunction.h"
#include "core/Dot.h"
#include "core/Error.h"
#include "core/FusedModule.h"
#include "core/Json.h"
#include "core/Memory.h"
#include "core/Printer.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Pass.h"
#include "repl/commands/CommandHelpers.h"
#include "repl/Engine.h"
#include "repl/GraphLang.h"
#include "repl/SessionFile.h"
#include "repl/TextFile.h"

#include "core/Printer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace loupe {

// The helpers other command files share (repl/commands/CommandHelpers.h) come first, outside the
// anonymous namespace.

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

std::vector<std::string> splitList(const std::string &text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? at : at - start));
    if (at == std::string::npos)
      return out;
    start = at + 1;
  }
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

// Pads to `w` columns, counting UTF-8 characters (not bytes); a longer text keeps two spaces
// before whatever follows.
std::string pad(std::string s, size_t w) {
  size_t cols = 0;
  for (unsigned char c : s)
    cols += (c & 0xC0) != 0x80;
  s += std::string(cols + 2 <= w ? w - cols : 2, ' ');
  return s;
}

std::string joinNames(const std::vector<std::string> &v, const char *sep) {
  std::string r;
  for (const auto &x : v)
    r += (r.empty() ? "" : sep) + x;
  return r;
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

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// "16 nodes, 7 inputs, 1 output"
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

std::string graphSize(const IndexedGraph &idx) {
  return plural(idx.numNodes(), "node") + ", " + plural(idx.argNodes.size(), "input") + ", " +
         plural(idx.heads.size(), "output");
}

namespace {

// True if one of the passes named in `names` provides attribute `key`.
bool applies(const std::vector<std::string> &names, const std::string &key) {
  for (const auto &n : names)
    if (const PassInfo *p = PassRegistry::get().find(n))
      for (const auto &k : p->provides)
        if (k == key)
          return true;
  return false;
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

} // namespace

const Graph &Engine::requireGraph() const {
  if (!current())
    fail("no current graph: make one with :graph NAME or :load FILE");
  return current()->graph;
}

void Engine::pushStep(Graph g, std::string label, double millis, bool fresh) {
  std::string change = describeChange(fresh || history_.empty() ? nullptr : &current()->graph, g);
  if (!history_.empty())
    history_.resize(cursor_ + 1); // a new step drops the redo tail
  history_.push_back({std::move(g), std::move(label), std::move(change), millis, {}});
  cursor_ = history_.size() - 1;
}

void Engine::writeRecording() const {
  if (recordPath_.empty())
    return;
  std::string text = "# Recorded by loupe; replay with: loupe --check " + recordPath_ + "\n";
  for (size_t i = recordFrom_; i < transcript_.size(); ++i)
    text += formatExchange(transcript_[i].input, transcript_[i].output) + "\n";
  writeTextFile(recordPath_, text);
}

void Engine::runCommand(const std::string &text, std::ostream &out) {
  size_t end = text.find_first_of(" \t\n");
  std::string name = text.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  std::string rest = end == std::string::npos ? "" : text.substr(end + 1);
  restColumn_ = end == std::string::npos ? text.size() + 1 : static_cast<int>(end) + 2;
  for (const auto &c : commands_)
    if (c.name == name) {
      c.run(*this, splitArgs(rest), rest, out);
      return;
    }
  std::vector<std::string> names;
  for (const auto &c : commands_)
    names.push_back(c.name);
  fail("unknown command ':", name, "'", didYouMean(name, names), "; :help lists the commands");
}

std::vector<std::string> Engine::completions(const std::string &line,
                                             const std::string &word) const {
  std::vector<std::string> pool;
  std::string trimmed = line.substr(0, line.size() - word.size());
  size_t b = trimmed.find_first_not_of(" \t");
  trimmed = b == std::string::npos ? "" : trimmed.substr(b);
  if (trimmed.empty() && !word.empty() && word[0] == ':') {
    for (const auto &c : commands_)
      pool.push_back(":" + c.name);
  } else if (trimmed.rfind(":apply", 0) == 0 || trimmed.rfind(":help", 0) == 0) {
    pool = PassRegistry::get().names();
    if (trimmed.rfind(":help", 0) == 0)
      for (const auto &c : commands_)
        pool.push_back(c.name);
  } else if (trimmed.rfind(":attr", 0) == 0 || trimmed.rfind(":ir", 0) == 0) {
    if (current())
      pool = orderedAttrKeys(current()->graph.attrs);
  } else if (trimmed.rfind(":ops", 0) == 0) {
    pool = OpRegistry::get().names();
  } else {
    pool = OpRegistry::get().names();
    for (const auto &v : variableNames())
      pool.push_back(v);
    pool.push_back("Variable");
    pool.push_back("Group");
  }
  std::vector<std::string> out;
  for (const auto &p : pool)
    if (p.rfind(word, 0) == 0)
      out.push_back(p);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Engine::registerCommands() {
  using Clock = std::chrono::steady_clock;
  auto add = [this](std::string name, std::string usage, std::string summary, auto fn) {
    commands_.push_back({std::move(name), std::move(usage), std::move(summary), fn});
  };

  add("help", "[CMD]", "lists the commands, or describes one",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 1, ":help [CMD]");
        if (a.size() == 1) {
          std::string n = a[0][0] == ':' ? a[0].substr(1) : a[0];
          for (const auto &c : e.commands_)
            if (c.name == n) {
              out << ":" << c.name << (c.usage.empty() ? "" : " " + c.usage) << "\n  " << c.summary
                  << "\n";
              return;
            }
          if (const PassInfo *p = PassRegistry::get().find(n)) {
            out << p->name << ": " << p->summary << "\n";
            return;
          }
          if (const OpDef *op = OpRegistry::get().find(n)) {
            printOpDetails(*op, out);
            return;
          }
          std::vector<std::string> names;
          for (const auto &c : e.commands_)
            names.push_back(c.name);
          fail("no command, pass or op named '", n, "'", didYouMean(n, names));
        }
        out << "Statements build symbols, as nnvm.symbol does:\n"
            << "  x = Variable(\"x\", shape=(1, 3, 32, 32))\n"
            << "  y = relu(conv2d(data=x, channels=8, kernel_size=(3, 3)))\n"
            << "Commands:\n";
        for (const auto &c : e.commands_)
          out << "  " << pad(":" + c.name + (c.usage.empty() ? "" : " " + c.usage), 26) << c.summary
              << "\n";
      });

  add("graph", "EXPR", "makes a symbol the current graph (nnvm.graph.create)",
      [](Engine &e, const Args &a, const std::string &rest, std::ostream &out) {
        if (a.empty())
          fail("usage: :graph EXPR (a symbol name such as z, or Group([a, b]))");
        Value v = e.evalArgument(rest, e.restColumn_, ":graph EXPR (one expression)");
        if (v.kind != Value::Kind::Symbol)
          fail(":graph needs a symbol, got ", kindName(v));
        Graph g(v.sym.outputs);
        const IndexedGraph &idx = g.index();
        e.pushStep(g, "graph " + rest, 0, true);
        out << "step " << e.cursor_ << ": graph " << rest << " (" << graphSize(idx) << ")\n";
      });

  add("grad", "OUT wrt IN …", "the gradient graph of OUT with respect to the inputs IN",
      [](Engine &e, const Args &, const std::string &rest, std::ostream &out) {
        size_t wrt = rest.find(" wrt ");
        if (wrt == std::string::npos)
          fail("usage: :grad OUT wrt IN … (for example :grad z wrt x)");
        std::string ys = rest.substr(0, wrt), xs = rest.substr(wrt + 5);
        // IN is a space-separated list of names: evaluate it as a list.
        std::string list;
        for (const auto &w : splitArgs(xs))
          list += (list.empty() ? "" : ", ") + w;
        const char *usage = ":grad OUT wrt IN …";
        Value yv = e.evalArgument(ys, e.restColumn_, usage);
        Value xv =
            e.evalArgument("[" + list + "]", e.restColumn_ + static_cast<int>(wrt) + 4, usage);
        Expr at{}; // no position: these errors are about the graph, not the command text
        Graph g = e.gradientOf(yv, xv, at);
        e.pushStep(g, "grad " + rest, 0, true);
        out << "step " << e.cursor_ << ": grad " << rest << " (" << graphSize(g.index()) << ")\n";
      });

  add("ir", "[KEY …]", "prints the graph as PrintGraphIR does, optionally with attributes joined",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        for (const auto &k : a)
          if (!e.requireGraph().attr(k))
            missingAttr(e.requireGraph(), k);
        std::string ir = printGraphIR(e.requireGraph(), a);
        out << ir << (ir.back() == '\n' ? "" : "\n");
      });

  add("nodes", "[N]", "the node table (graph.index.nodes), or node N",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 1, ":nodes [N]");
        const IndexedGraph &idx = e.requireGraph().index();
        if (a.empty()) {
          out << pyPformat(nodesToPy(idx)) << "\n";
          return;
        }
        int n = -1;
        try {
          n = std::stoi(a[0]);
        } catch (...) {
          n = idx.findByName(a[0]);
          if (n < 0)
            fail("no node named '", a[0], "'");
        }
        if (n < 0 || n >= static_cast<int>(idx.numNodes()))
          fail("node ", a[0], " is out of range (the graph has ", idx.numNodes(), " nodes)");
        out << pyRepr(nodeToPy(idx, n)) << "\n";
      });

  add("attr", "KEY [N]", "a graph attribute as graph.json_attr(KEY) prints it, or its entry N",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 2, ":attr KEY [N]");
        const Graph &g = e.requireGraph();
        const GraphAttr *v = g.attr(a[0]);
        if (!v)
          missingAttr(g, a[0]);
        if (a.size() == 1) {
          out << v->pyRepr() << "\n";
          return;
        }
        GraphAttr one = *v;
        size_t n = 0;
        try {
          n = std::stoul(a[1]);
        } catch (...) {
          fail("index must be a non-negative number, got '", a[1], "'");
        }
        switch (v->type) {
        case GraphAttr::Type::ListInt:
          if (n >= v->ints.size())
            fail("index ", n, " is out of range (", v->ints.size(), " values)");
          out << v->ints[n] << "\n";
          return;
        case GraphAttr::Type::ListShape:
          if (n >= v->shapes.size())
            fail("index ", n, " is out of range (", v->shapes.size(), " values)");
          out << shapeToList(v->shapes[n]) << "\n";
          return;
        case GraphAttr::Type::ListStr:
        case GraphAttr::Type::ListLayout:
          if (n >= v->strs.size())
            fail("index ", n, " is out of range (", v->strs.size(), " values)");
          out << pyStrRepr(v->strs[n]) << "\n";
          return;
        default:
          fail("attribute '", a[0], "' is not a list");
        }
      });

  add("setattr", "KEY VALUE [TYPE]",
      "sets a graph attribute as graph._set_json_attr does (TYPE: str, int, size_t, list_int, "
      "list_str, list_shape, list_layout, dict_str_int; default str)",
      [](Engine &e, const Args &a, const std::string &rest, std::ostream &out) {
        static const std::set<std::string> kTypes = {"str",         "int",         "size_t",
                                                     "list_int",    "list_str",    "list_shape",
                                                     "list_layout", "dict_str_int"};
        if (a.size() < 2)
          fail("usage: :setattr KEY VALUE [TYPE] (for example :setattr target llvm str)");
        const Graph before = e.requireGraph(); // a copy: pushStep may move the history
        std::string key = a[0], type = "str";
        std::string value = rest.substr(rest.find(key) + key.size());
        size_t sp = value.find_last_not_of(" \t");
        value = sp == std::string::npos ? "" : value.substr(0, sp + 1);
        size_t lastSpace = value.find_last_of(" \t");
        if (lastSpace != std::string::npos && kTypes.count(value.substr(lastSpace + 1))) {
          type = value.substr(lastSpace + 1);
          value = value.substr(0, lastSpace);
        }
        size_t first = value.find_first_not_of(" \t");
        if (first == std::string::npos) // ":setattr targetllvm str": the value is missing
          fail("usage: :setattr KEY VALUE [TYPE]: no value for '", key, "'");
        value = value.substr(first);
        value = value.substr(0, value.find_last_not_of(" \t") + 1);
        auto parse = [&]() -> Value {
          try {
            auto stmts = parseStatements(value);
            if (stmts.size() != 1 || !stmts[0].target.empty())
              fail("not one value");
            return e.eval(*stmts[0].value);
          } catch (const Error &err) {
            fail(":setattr: cannot read '", value, "' as ", type, ": ", err.what());
          }
        };
        auto ints = [&](const Value &v, const char *what) {
          std::vector<int64_t> out;
          if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
            fail(":setattr: ", type, " needs a list of ", what);
          for (const auto &i : v.items) {
            if (i.kind != Value::Kind::Int)
              fail(":setattr: ", type, " needs a list of ", what, ", got ", kindName(i));
            out.push_back(i.i);
          }
          return out;
        };
        GraphAttr attr;
        if (type == "str") {
          std::string s = value;
          if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
            s = s.substr(1, s.size() - 2);
          attr = GraphAttr::string(s);
        } else if (type == "int" || type == "size_t") {
          Value v = parse();
          if (v.kind != Value::Kind::Int)
            fail(":setattr: ", type, " needs an integer, got ", kindName(v));
          attr = type == "int" ? GraphAttr::integer(v.i) : GraphAttr::sizeT(v.i);
        } else if (type == "list_int") {
          attr = GraphAttr::listInt(ints(parse(), "integers"));
        } else if (type == "list_shape") {
          Value v = parse();
          if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
            fail(":setattr: list_shape needs a list of shapes");
          std::vector<Shape> shapes;
          for (const auto &i : v.items)
            shapes.push_back(ints(i, "integers"));
          attr = GraphAttr::listShape(shapes);
        } else if (type == "list_str" || type == "list_layout") {
          Value v = parse();
          std::vector<std::string> strs;
          if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
            fail(":setattr: ", type, " needs a list of strings");
          for (const auto &i : v.items) {
            if (i.kind != Value::Kind::Str)
              fail(":setattr: ", type, " needs a list of strings, got ", kindName(i));
            strs.push_back(i.s);
          }
          attr = type == "list_str" ? GraphAttr::listStr(strs) : GraphAttr::listLayout(strs);
        } else { // dict_str_int, written as pairs: [("gpu", 1), ("cpu", 0)]
          Value v = parse();
          attr.type = GraphAttr::Type::DictStrInt;
          if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
            fail(":setattr: dict_str_int needs a list of (name, number) pairs");
          for (const auto &p : v.items) {
            if (p.items.size() != 2 || p.items[0].kind != Value::Kind::Str ||
                p.items[1].kind != Value::Kind::Int)
              fail(":setattr: dict_str_int needs a list of (name, number) pairs");
            attr.dict[p.items[0].s] = p.items[1].i;
          }
        }
        Graph g = before;
        g.attrs[key] = attr;
        validateGraphAttr(g, key);
        e.pushStep(g, "setattr " + key, 0, false);
        out << "step " << e.cursor_ << ": setattr " << key << " = " << attr.pyRepr() << " ("
            << attr.typeName() << ")\n";
      });

  add("open", "KEY [NAME]",
      "opens a graph held in an attribute as a new step: precompute_graph, or function NAME of "
      "module",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 2, ":open KEY [NAME]");
        const Graph &g = e.requireGraph();
        const GraphAttr *attr = g.attr(a[0]);
        if (!attr)
          missingAttr(g, a[0]);
        Graph opened;
        if (a[0] == "module") {
          if (a.size() != 2)
            fail("usage: :open module FUNCTION; functions: ", joinNames(functionOrder(g)));
          opened = findFunction(g, a[1]).body;
        } else if (attr->type == GraphAttr::Type::Opaque && a[0] == "precompute_graph") {
          needArgs(a, 1, 1, ":open precompute_graph");
          opened = *std::static_pointer_cast<const Graph>(attr->opaque);
        } else {
          fail("attribute '", a[0], "' does not hold a graph (open precompute_graph or module)");
        }
        std::string label = "open " + a[0] + (a.size() == 2 ? " " + a[1] : "");
        e.pushStep(opened, label, 0, true);
        out << "step " << e.cursor_ << ": " << label << " (" << graphSize(opened.index()) << ")\n";
      });

  add("lower", "[FUNC]",
      "the lowered loops of a fused function of the module (all of them without FUNC)",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 1, ":lower [FUNC]");
        const Graph &g = e.requireGraph();
        std::vector<std::string> names = a.empty() ? functionOrder(g) : a;
        auto lib = backend::builtLibrary(g);
        for (const std::string &name : names) {
          backend::LoweredFunction f = backend::lowerFunction(findFunction(g, name));
          out << "lower function " << name << "\n";
          if (std::string owner = lib ? lib->code->sharedWith(name) : ""; !owner.empty())
            out << "// runs the machine code of " << owner << " (the same loops, compiled once)\n";
          out << backend::printLowered(f);
        }
      });

  add("schedule", "FUNC", "the schedule steps the default x86 schedule applied to a function",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":schedule FUNC");
        backend::LoweredFunction f = backend::lowerFunction(findFunction(e.requireGraph(), a[0]));
        std::string steps = f.schedule->describe();
        out << (steps.empty() ? "no schedule steps: every loop as computed\n" : steps);
      });

  add("apply", "P1 [P2 …]", "applies passes in order; the result is a new history step",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        if (a.empty())
          fail("usage: :apply P1 [P2 …] (:passes lists them)");
        const Graph before = e.requireGraph(); // a copy: pushStep may move the history
        auto t0 = Clock::now();
        Graph after = applyPasses(before, a, e.passContext_);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        e.pushStep(after, "apply " + joinNames(a, " "), ms, false);
        out << "step " << e.cursor_ << ": apply " << joinNames(a, " ") << " ("
            << e.current()->change << ")\n";
        // Warn about unknown entries only when this step computed the count.
        for (const char *k : {"shape_num_unknown_nodes", "dtype_num_unknown_nodes"}) {
          const GraphAttr *u = e.current()->graph.attr(k), *was = before.attr(k);
          if (u && u->num > 0 && (!was || !(*was == *u) || applies(a, k)))
            out << "warning: " << k << " = " << u->num << ": some entries are still unknown\n";
        }
      });

  add("set", "[KEY VALUE]",
      "sets an option: opt_level N, fuse_opt_level N (FuseOps; -1 follows opt_level), "
      "fusion_rules A|B|C, nofuse OP[,OP]|none, target llvm [-mcpu=NAME], memory_limit "
      "SIZE|none (what allocations are checked against instead of the machine's memory)",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        PassContext &c = e.passContext_;
        if (a.empty()) {
          std::string nofuse;
          for (const auto &op : c.noFuse)
            nofuse += (nofuse.empty() ? "" : ",") + op;
          out << "opt_level " << c.optLevel << "\nfuse_opt_level " << c.get("fuse_opt_level", "-1")
              << "\nfusion_rules " << c.get("fusion_rules", "A") << "\nnofuse "
              << (nofuse.empty() ? "none" : nofuse) << "\ntarget " << c.get("target", "llvm")
              << "\n";
          if (memoryLimitBytes())
            out << "memory_limit " << formatBytes(static_cast<double>(memoryLimitBytes())) << "\n";
          return;
        }
        // A target string has options after its kind: "llvm -mcpu=skylake-avx512".
        needArgs(a, 2, a[0] == "target" ? a.size() : 2, ":set KEY VALUE");
        const std::string &k = a[0];
        std::string v = a[1];
        for (size_t i = 2; i < a.size(); ++i)
          v += " " + a[i];
        if (k == "opt_level") {
          if (v.size() != 1 || v[0] < '0' || v[0] > '3')
            fail("opt_level must be 0, 1, 2 or 3, got '", v, "'");
          c.optLevel = v[0] - '0';
        } else if (k == "fuse_opt_level") {
          if (v != "-1" && (v.size() != 1 || v[0] < '0' || v[0] > '3'))
            fail("fuse_opt_level must be -1 (follow opt_level) or 0-3, got '", v, "'");
          c.config["fuse_opt_level"] = v;
        } else if (k == "fusion_rules") {
          if (v != "A" && v != "B" && v != "C")
            fail("fusion_rules must be A (seed era), B (diamond fusion) or C (v0.5), got '", v,
                 "'");
          c.config["fusion_rules"] = v;
        } else if (k == "nofuse") {
          std::set<std::string> ops;
          if (v != "none")
            for (const auto &op : splitList(v, ',')) {
              if (!OpRegistry::get().find(op))
                fail("unknown op '", op, "'", didYouMean(op, OpRegistry::get().names()));
              ops.insert(OpRegistry::get().find(op)->name);
            }
          c.noFuse = ops;
        } else if (k == "target") {
          if (a[1] != "llvm")
            fail("target must be llvm (the host CPU), got '", v, "'");
          for (size_t i = 2; i < a.size(); ++i)
            if (a[i].rfind("-mcpu=", 0) != 0 || a[i].size() == 6)
              fail("target option '", a[i], "' is not supported; write llvm -mcpu=NAME");
          c.config["target"] = v;
        } else if (k == "memory_limit") {
          setMemoryLimit(v == "none" ? 0 : parseBytes(v));
        } else if (k == "cache") {
          if (v == "off") {
            e.kernelCache_.reset();
          } else if (v == "on") {
            if (!e.kernelCache_)
              e.kernelCache_ = std::make_shared<backend::KernelCache>();
          } else if (v == "clear") {
            (e.kernelCache_ ? *e.kernelCache_ : backend::KernelCache()).clear();
            out << "kernel cache cleared\n";
            return;
          } else {
            fail("cache must be on, off or clear, got '", v, "'");
          }
        } else {
          fail("unknown option '", k, "'",
               didYouMean(k, {"opt_level", "fuse_opt_level", "fusion_rules", "nofuse", "target",
                              "cache", "memory_limit"}),
               "; options are opt_level, fuse_opt_level, fusion_rules, nofuse, target, cache, "
               "memory_limit");
        }
        out << k << " = " << v << "\n";
      });

  add("groups", "", "the fusion groups: roots, masters, one line per node, then each group",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":groups");
        const Graph &g = e.requireGraph();
        for (const char *k : {"group_root", "group_master", "pattern"})
          validateGraphAttr(g, k);
        std::vector<FusedGroup> groups = fusedGroups(g);
        const IndexedGraph &idx = g.index();
        const GraphAttr &roots = *g.attr("group_root"), &masters = *g.attr("group_master");
        out << "roots: " << roots.pyRepr() << "\nmasters: " << masters.pyRepr() << "\n\n";
        auto nameOf = [&](int64_t id) {
          return id >= 0 ? idx.nodes[id].node->name : std::string("None");
        };
        for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
          out << idx.nodes[nid].node->name << " has root " << nameOf(roots.ints[nid])
              << " and master " << nameOf(masters.ints[nid]) << "\n";
        // Names as GraphFuseCompile would give them now, without using them up.
        FunctionNames names = e.functionNames_;
        std::string target =
            g.attr("target") ? g.attr("target")->str : e.passContext_.get("target", "llvm");
        out << "\n";
        for (const FusedGroup &grp : groups) {
          std::vector<std::string> members;
          for (uint32_t m : grp.members)
            members.push_back(idx.nodes[m].node->name);
          out << "group " << idx.nodes[grp.root].node->name << ": " << joinNames(members)
              << "; pattern " << patternName(grp.pattern) << "; master " << nameOf(grp.master)
              << "; function " << names.assign(kernelKey(g, grp, target), readableName(idx, grp))
              << "\n";
        }
      });

  add("why", "A B", "explains from the fusion rules why nodes A and B did or did not fuse",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 2, 2, ":why A B (two node names)");
        const Graph &g = e.requireGraph();
        if (!g.attr("shape"))
          missingAttr(g, "shape");
        const IndexedGraph &idx = g.index();
        int ia = idx.findByName(a[0]), ib = idx.findByName(a[1]);
        std::vector<std::string> names;
        for (const auto &n : idx.nodes)
          names.push_back(n.node->name);
        if (ia < 0)
          fail("no node named '", a[0], "'", didYouMean(a[0], names));
        if (ib < 0)
          fail("no node named '", a[1], "'", didYouMean(a[1], names));
        int opt = g.attr("opt_level") ? static_cast<int>(g.attr("opt_level")->num)
                                      : e.passContext_.optLevel;
        std::string rules = e.passContext_.get("fusion_rules", "A");
        PartitionResult r = partitionGraph(g, opt, rules, e.passContext_.noFuse);
        auto reads = [&](int consumer, int producer) {
          for (const auto &in : idx.nodes[consumer].inputs)
            if (static_cast<int>(in.nodeId) == producer)
              return true;
          return false;
        };
        int p = ia, c = ib;
        if (!reads(c, p))
          std::swap(p, c);
        auto groupText = [&](int nid) { return "group " + idx.nodes[r.root[nid]].node->name; };
        out << "(rules " << rules << ", opt_level " << opt << ")\n";
        if (!reads(c, p)) {
          out << a[0] << " and " << a[1] << " are not connected by an edge; " << a[0] << " is in "
              << groupText(ia) << ", " << a[1] << " in " << groupText(ib)
              << (r.root[ia] == r.root[ib] ? " (the same group)" : "") << "\n";
          return;
        }
        bool fused = r.root[p] == r.root[c];
        out << names[p] << " -> " << names[c] << ": "
            << (fused ? "fused, in " + groupText(c)
                      : "not fused: " + names[p] + " is in " + groupText(p) + ", " + names[c] +
                            " in " + groupText(c))
            << "\n  " << r.why.at({static_cast<uint32_t>(p), static_cast<uint32_t>(c)}) << "\n";
      });

  add("trace", "on|off", "prints every pass applied and the graph after it",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":trace on|off");
        auto &insts = e.passContext_.instruments;
        auto isTrace = [](const auto &i) { return i->name() == "trace"; };
        insts.erase(std::remove_if(insts.begin(), insts.end(), isTrace), insts.end());
        if (a[0] == "on")
          insts.push_back(std::make_shared<TraceInstrument>(e.sink_));
        else if (a[0] != "off")
          fail("usage: :trace on|off");
        out << "trace " << a[0] << "\n";
      });

  add("instrument", "[KIND …]",
      "adds pass instruments: print-before P|all, print-after P|all, print-changed P|all, "
      "names, timing, effects; `off` removes all; no argument lists them",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        auto &insts = e.passContext_.instruments;
        if (a.empty()) {
          if (insts.empty())
            out << "(no instruments)\n";
          for (const auto &i : insts)
            out << i->name() << "\n";
          return;
        }
        if (a[0] == "off") {
          needArgs(a, 1, 1, ":instrument off");
          insts.clear();
          out << "instruments off\n";
          return;
        }
        std::shared_ptr<PassInstrument> inst;
        if (a[0] == "print-before" || a[0] == "print-after" || a[0] == "print-changed") {
          if (a.size() < 2)
            fail("usage: :instrument ", a[0], " PASS …|all");
          std::set<std::string> names;
          for (size_t i = 1; i < a.size(); ++i) {
            if (a[i] == "all" && a.size() == 2)
              break;
            requirePass(a[i]);
            names.insert(a[i]);
          }
          auto when =
              a[0] == "print-before" ? PrintInstrument::When::Before : PrintInstrument::When::After;
          inst = std::make_shared<PrintInstrument>(e.sink_, when, names, a[0] == "print-changed");
        } else if (a[0] == "timing" || a[0] == "effects" || a[0] == "names") {
          needArgs(a, 1, 1, cat(":instrument ", a[0]));
          if (a[0] == "timing")
            inst = std::make_shared<TimingInstrument>();
          else if (a[0] == "names")
            inst = std::make_shared<NamesInstrument>(e.sink_);
          else
            inst = std::make_shared<EffectsInstrument>(e.sink_);
        } else {
          fail("unknown instrument '", a[0], "'",
               didYouMean(a[0], {"print-before", "print-after", "print-changed", "timing",
                                 "effects", "names", "off"}),
               "; kinds are print-before, print-after, print-changed, names, timing, effects, "
               "off");
        }
        insts.push_back(inst);
        out << "instrument " << inst->name() << "\n";
      });

  add("timing", "", "prints the timing instrument's tree of pass times (µs) and clears it",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":timing");
        for (const auto &i : e.passContext_.instruments)
          if (auto t = std::dynamic_pointer_cast<TimingInstrument>(i)) {
            std::string tree = t->render();
            out << (tree.empty() ? "(no passes timed yet)\n" : tree);
            return;
          }
        fail("no timing instrument: add one with :instrument timing");
      });

  add("pipeline", "P1,P2(opt=v),… [opt_level=N] [disabled=A,B] [required=C]",
      "runs passes as a Sequential under a pass context, with Relay's rules",
      [](Engine &e, const Args &, const std::string &rest, std::ostream &out) {
        // The pass list may contain spaces inside (…); the context options come after it.
        std::string list = rest, opts;
        for (const char *key : {" opt_level=", " disabled=", " required="}) {
          size_t at = rest.find(key);
          if (at != std::string::npos && at < list.size())
            list = rest.substr(0, at);
        }
        opts = rest.substr(list.size());
        if (list.find_first_not_of(" \t") == std::string::npos)
          fail("usage: :pipeline P1,P2,… [opt_level=N] [disabled=A,B] [required=C]");
        std::vector<PipelineEntry> entries = parsePipeline(list);
        PassContext ctx = e.passContext_;
        auto names = [](const std::string &v) {
          std::set<std::string> out;
          for (const auto &n : splitList(v, ','))
            if (!n.empty())
              out.insert(requirePass(n).name);
          return out;
        };
        for (const auto &o : splitArgs(opts)) {
          size_t eq = o.find('=');
          std::string k = o.substr(0, eq), v = eq == std::string::npos ? "" : o.substr(eq + 1);
          if (k == "opt_level" && v.size() == 1 && v[0] >= '0' && v[0] <= '3')
            ctx.optLevel = v[0] - '0';
          else if (k == "disabled")
            ctx.disabledPass = names(v);
          else if (k == "required")
            ctx.requiredPass = names(v);
          else
            fail("pipeline: bad context option '", o,
                 "'; use opt_level=0..3, disabled=A,B or required=C");
        }
        const Graph before = e.requireGraph(); // a copy: pushStep may move the history
        for (const auto &en : entries) {
          std::string why;
          if (!passEnabled(*en.pass, ctx, &why))
            out << "skipped " << en.pass->name << ": " << why << "\n";
        }
        auto t0 = Clock::now();
        Graph after = runSequential(before, entries, ctx);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        std::string label = "pipeline " + rest;
        e.pushStep(after, label, ms, false);
        out << "step " << e.cursor_ << ": " << label << " (" << e.current()->change << ")\n";
      });

  add("explain", "PASS", "would PASS run in a pipeline now, and why; what it needs and provides",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":explain PASS");
        const PassInfo &p = requirePass(a[0]);
        std::string why;
        bool on = passEnabled(p, e.passContext_, &why);
        out << p.name << ": " << p.summary << "\n";
        out << "in a pipeline now: " << (on ? "runs" : "skipped") << " (" << why << ")\n";
        if (!p.required.empty())
          out << "runs first, every time: " << joinNames(p.required) << "\n";
        const Graph *g = e.current() ? &e.current()->graph : nullptr;
        for (const auto &n : p.needs) {
          out << "needs " << n << ": ";
          if (!g)
            out << "no current graph\n";
          else if (g->attr(n))
            out << "present\n";
          else
            out << "missing; provided by " << joinNames(PassRegistry::get().providersOf(n), " or ")
                << "\n";
        }
        if (!p.provides.empty())
          out << "provides " << joinNames(p.provides) << "\n";
        out << (p.changesGraph ? "rebuilds the graph\n" : "adds attributes, keeps the graph\n");
      });

  add("diff", "[A] [B]", "what changed between two history steps (default: the last step)",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 2, ":diff [A] [B]");
        if (e.history_.empty())
          fail("no history yet: make a graph with :graph NAME");
        auto step = [&](const std::string &s) {
          size_t n = 0;
          try {
            n = std::stoul(s);
          } catch (...) {
            fail("step must be a number, got '", s, "'");
          }
          if (n >= e.history_.size())
            fail("no step ", n, " (the history has ", e.history_.size(), " steps)");
          return n;
        };
        size_t from, to;
        if (a.empty()) {
          if (e.cursor_ == 0)
            fail("step 0 has no previous step; give two steps: :diff A B");
          from = e.cursor_ - 1;
          to = e.cursor_;
        } else if (a.size() == 1) {
          from = step(a[0]);
          to = e.cursor_;
        } else {
          from = step(a[0]);
          to = step(a[1]);
        }
        const Graph &ga = e.history_[from].graph, &gb = e.history_[to].graph;
        out << "step " << from << " (" << e.history_[from].label << ") -> step " << to << " ("
            << e.history_[to].label << "): " << describeEffects(ga, gb) << "\n";
        auto lines = [](const Graph &g) { return outputLines(printGraphIR(g)); };
        auto la = lines(ga), lb = lines(gb);
        if (la != lb)
          out << unifiedDiff(la, lb, cat("step ", from), cat("step ", to));
      });

  add("load-pass", "FILE.so",
      "loads user-written passes from a shared library (a bare name is searched in "
      "$LOUPE_PLUGIN_PATH, then in the build's plugins/ folder)",
      [](Engine &, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":load-pass FILE.so");
        std::string path = a[0];
        if (path.find('/') == std::string::npos) {
          std::vector<std::string> dirs;
          if (const char *env = std::getenv("LOUPE_PLUGIN_PATH"))
            dirs = splitList(env, ':');
          std::error_code ec;
          auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
          if (!ec)
            dirs.push_back((exe.parent_path().parent_path() / "plugins").string());
          for (const auto &d : dirs)
            if (!d.empty() && std::filesystem::exists(d + "/" + path)) {
              path = d + "/" + path;
              break;
            }
          if (path.find('/') == std::string::npos)
            fail("no plugin '", a[0], "' in $LOUPE_PLUGIN_PATH or the build's plugins/ folder");
        }
        auto names = loadPassPlugin(path, a[0]);
        out << "loaded " << joinNames(names) << " from " << a[0] << "\n";
      });

  add("passes", "", "lists the registered passes",
      [](Engine &, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":passes");
        for (const PassInfo *p : PassRegistry::get().all()) {
          out << pad(p->name, 20) << p->summary << "\n";
          out << pad("", 20) << "level " << p->optLevel
              << (p->needs.empty() ? "" : "; needs " + joinNames(p->needs))
              << (p->provides.empty() ? "" : "; provides " + joinNames(p->provides))
              << (p->changesGraph ? "; rebuilds the graph" : "") << "\n";
        }
      });

  add("ops", "[NAME|TEXT]", "lists the ops (with a filter), or describes one op",
      [](Engine &, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 1, ":ops [NAME|TEXT]");
        if (a.size() == 1)
          if (const OpDef *op = OpRegistry::get().find(a[0])) {
            printOpDetails(*op, out);
            return;
          }
        size_t shown = 0;
        for (const OpDef *op : OpRegistry::get().all()) {
          if (a.size() == 1 && op->name.find(a[0]) == std::string::npos)
            continue;
          ++shown;
          out << pad(op->name, 20) << pad(patternName(op->pattern), 16) << op->doc
              << (op->aliases.empty() ? "" : " (alias " + joinNames(op->aliases) + ")") << "\n";
        }
        if (shown == 0)
          fail("no op matches '", a[0], "'", didYouMean(a[0], OpRegistry::get().names()));
      });

  add("load", "FILE [DIM=N …]",
      "loads an NNVM graph JSON file, or an ONNX model (.onnx, its initializers "
      "as params; DIM=N sizes its inputs' symbolic dimensions), as a new step",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 64, ":load FILE [DIM=N …]");
        if (a[0].ends_with(".onnx")) {
          frontend::DimSizes dims;
          for (size_t i = 1; i < a.size(); ++i) {
            size_t eq = a[i].find('=');
            if (eq == std::string::npos || eq == 0)
              fail("expected DIM=N (a symbolic dimension's size), got '", a[i], "'");
            dims[a[i].substr(0, eq)] = integerAtLeast(a[i].substr(0, eq), a[i].substr(eq + 1), 1);
          }
          frontend::OnnxModel m = frontend::importOnnx(a[0], dims);
          e.pushStep(m.graph, "load " + a[0], 0, true);
          e.modelParams_ = std::move(m.params);
          e.modelDTypes_ = std::move(m.inputDTypes);
          out << "step " << e.cursor_ << ": load " << a[0] << " (" << graphSize(m.graph.index())
              << "; opset " << m.opset << "; " << plural(e.modelParams_.size(), "param") << ")\n";
          for (size_t k : m.scalarOutputs)
            out << "note: output " << k
                << " is a scalar (rank 0) in ONNX; it is computed here as shape (1,), as NNVM "
                   "reduces to a scalar\n";
          return;
        }
        if (a.size() > 1)
          fail("only an ONNX model takes dimension sizes; ", a[0], " is a graph JSON file");
        Graph g = loadJSON(readTextFile(a[0]), a[0]);
        const IndexedGraph &idx = g.index();
        e.pushStep(g, "load " + a[0], 0, true);
        out << "step " << e.cursor_ << ": load " << a[0] << " (" << graphSize(idx) << ")\n";
      });

  add("dot", "FILE", "writes the current graph as Graphviz DOT (fusion groups as clusters)",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":dot FILE");
        const Graph &g = e.requireGraph();
        std::string text = graphToDot(g);
        writeTextFile(a[0], text);
        out << "wrote step " << e.cursor_ << " to " << a[0] << " (" << graphSize(g.index())
            << "); render it with: dot -Tsvg " << a[0] << " -o graph.svg\n";
      });

  add("save", "FILE", "saves the current graph as NNVM graph JSON",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":save FILE");
        std::vector<std::string> dropped;
        Graph g = withoutOpaqueAttrs(e.requireGraph(), dropped);
        std::string text = saveJSON(g);
        writeTextFile(a[0], text);
        out << "saved step " << e.cursor_ << " to " << a[0] << " (" << text.size() << " bytes)\n";
        if (!dropped.empty())
          out << "note: not saved: " << joinNames(dropped)
              << " (compiled objects have no JSON form)\n";
      });

  add("history", "[times]", "lists the history steps; * marks the current one",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 1, ":history [times]");
        bool times = a.size() == 1;
        if (times && a[0] != "times")
          fail("usage: :history [times]");
        if (e.history_.empty()) {
          out << "(no steps yet)\n";
          return;
        }
        for (size_t i = 0; i < e.history_.size(); ++i) {
          const Step &s = e.history_[i];
          out << (i == e.cursor_ ? "* " : "  ") << pad(std::to_string(i), 3) << pad(s.label, 36)
              << s.change;
          if (times) {
            char buf[32];
            std::snprintf(buf, sizeof buf, " [%.3f ms]", s.millis);
            out << buf;
          }
          out << "\n";
        }
      });

  add("undo", "", "goes back one history step",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":undo");
        if (e.history_.empty() || e.cursor_ == 0)
          fail("nothing to undo");
        --e.cursor_;
        out << "now at step " << e.cursor_ << ": " << e.history_[e.cursor_].label << "\n";
      });

  add("redo", "", "goes forward one history step",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":redo");
        if (e.history_.empty() || e.cursor_ + 1 >= e.history_.size())
          fail("nothing to redo");
        ++e.cursor_;
        out << "now at step " << e.cursor_ << ": " << e.history_[e.cursor_].label << "\n";
      });

  add("record", "FILE", "writes the session so far to FILE and keeps recording until :stop",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 1, 1, ":record FILE");
        std::string old = e.recordPath_;
        e.recordPath_ = a[0];
        e.recordFrom_ = 0;
        try {
          e.writeRecording();
        } catch (...) {
          e.recordPath_ = old;
          throw;
        }
        out << "recording to " << a[0] << " (" << e.transcript_.size() << " inputs so far)\n";
      });

  add("stop", "", "stops recording",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":stop");
        if (e.recordPath_.empty())
          fail("not recording (start with :record FILE)");
        out << "stopped recording " << e.recordPath_ << " (" << e.transcript_.size() - e.recordFrom_
            << " inputs)\n";
        e.recordPath_.clear();
      });

  add("quit", "", "ends the REPL or the script (as Ctrl-D does at the prompt)",
      [](Engine &e, const Args &a, const std::string &, std::ostream &) {
        needArgs(a, 0, 0, ":quit");
        e.quit_ = true;
      });

  add("vars", "", "lists the symbols defined so far",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":vars");
        for (const auto &[k, v] : e.env_)
          out << pad(k, 16) << pyRepr(v) << "\n";
      });

  add("target", "", "what LLVM detects about this machine (triple, CPU, SIMD features)",
      [](Engine &, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":target");
        HostTarget t = detectHostTarget();
        out << "llvm " << t.llvmVersion << "\ntriple " << t.triple << "\ncpu " << t.cpu << "\nsimd "
            << (t.simdFeatures.empty() ? "none" : joinNames(t.simdFeatures, " ")) << "\n";
      });
  registerBuildCommands();
}

} // namespace loupe
