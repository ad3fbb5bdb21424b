// Evaluator: the graph language's evaluation — the symbols bound so far, NNVM's name counters,
// and statements evaluated one by one into graph nodes (the parser is GraphLang).
#include "repl/Evaluator.h"

#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Op.h"
#include "passes/Gradient.h"
#include "repl/GraphLang.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

namespace loupe {

void Evaluator::run(const std::string &text, std::ostream &out) {
  Journal journal;
  journal_ = &journal;
  try {
    for (const Stmt &s : parseStatements(text)) {
      checkInterrupt();
      Value v = eval(*s.value);
      if (s.target.empty())
        out << pyRepr(v) << "\n";
      else
        bind(s.target, std::move(v));
    }
  } catch (...) {
    undo(journal);
    journal_ = nullptr;
    throw;
  }
  journal_ = nullptr;
}

std::vector<std::string> Evaluator::variableNames() const {
  std::vector<std::string> names;
  for (const auto &[k, v] : env_)
    names.push_back(k);
  return names;
}

void Evaluator::restore(State s) {
  env_ = std::move(s.env);
  nameCounters_ = std::move(s.counters);
  varVersions_ = std::move(s.versions);
}

void Evaluator::bind(const std::string &name, Value v) {
  auto it = env_.find(name);
  if (journal_)
    journal_->env.emplace_back(name, it == env_.end() ? std::nullopt : std::optional(it->second));
  if (it == env_.end())
    env_.emplace(name, std::move(v));
  else
    it->second = std::move(v);
}

int &Evaluator::counter(const std::string &key) {
  auto it = nameCounters_.find(key);
  if (journal_)
    journal_->counters.emplace_back(key, it == nameCounters_.end() ? std::nullopt
                                                                   : std::optional(it->second));
  return it == nameCounters_.end() ? nameCounters_[key] : it->second;
}

uint32_t &Evaluator::version(const Node *n) {
  auto it = varVersions_.find(n);
  if (journal_)
    journal_->versions.emplace_back(n, it == varVersions_.end() ? std::nullopt
                                                                : std::optional(it->second));
  return it == varVersions_.end() ? varVersions_[n] : it->second;
}

// Back to what the journal's first entry for each key saw: the entries undone last to first.
void Evaluator::undo(Journal &j) {
  auto back = [](auto &entries, auto &table) {
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (it->second)
        table[it->first] = std::move(*it->second);
      else
        table.erase(it->first);
    }
  };
  back(j.env, env_);
  back(j.counters, nameCounters_);
  back(j.versions, varVersions_);
}

namespace {

Error errAt(const Expr &e, const std::string &msg) { return Error(msg, e.line, e.col); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The Python module prefixes a tutorial may keep (`sym.conv2d`, `nnvm.symbol.relu`).
std::string stripModule(const std::string &name) {
  for (const char *p : {"nnvm.symbol.", "nnvm.sym.", "sym.", "symbol."})
    if (name.rfind(p, 0) == 0)
      return name.substr(std::string(p).size());
  return name;
}

} // namespace

Value Evaluator::eval(const Expr &e) {
  switch (e.kind) {
  case Expr::Kind::Int:
    return Value::integer(e.intValue);
  case Expr::Kind::Float:
    return Value::real(e.floatValue);
  case Expr::Kind::Str:
    return Value::str(e.text);
  case Expr::Kind::Name: {
    if (e.text == "True" || e.text == "False")
      return Value::boolean(e.text == "True");
    if (e.text == "None")
      return Value::none();
    auto it = env_.find(e.text);
    if (it == env_.end()) {
      std::vector<std::string> names = variableNames();
      throw errAt(e, cat("name '", e.text, "' is not defined", didYouMean(e.text, names)));
    }
    return it->second;
  }
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    Value v;
    v.kind = e.kind == Expr::Kind::Tuple ? Value::Kind::Tuple : Value::Kind::List;
    for (const auto &x : e.items)
      v.items.push_back(eval(*x));
    return v;
  }
  case Expr::Kind::Call:
    return callFunction(e);
  case Expr::Kind::Unary: {
    Value x = eval(*e.items[0]);
    if (e.text == "+") {
      if (!x.isNumber() && x.kind != Value::Kind::Symbol)
        throw errAt(e, cat("bad operand for unary +: ", kindName(x)));
      return x;
    }
    if (x.kind == Value::Kind::Int || x.kind == Value::Kind::Bool)
      return Value::integer(-static_cast<int64_t>(x.asDouble()));
    if (x.kind == Value::Kind::Float)
      return Value::real(-x.f);
    if (x.kind == Value::Kind::Symbol) // NNVM: -s is s * -1.0
      return callOp(*OpRegistry::get().find("__mul_scalar__"), "__mul_scalar__", {x},
                    {{"scalar", Value::real(-1.0)}}, e);
    throw errAt(e, cat("bad operand for unary -: ", kindName(x)));
  }
  case Expr::Kind::Binary:
    return binaryOp(e.text, eval(*e.items[0]), eval(*e.items[1]), e);
  case Expr::Kind::Index: {
    Value base = eval(*e.items[0]);
    Value ix = eval(*e.items[1]);
    if (ix.kind != Value::Kind::Int)
      throw errAt(*e.items[1], cat("index must be an integer, got ", kindName(ix)));
    int64_t i = ix.i;
    if (base.kind == Value::Kind::Symbol) {
      // A single-output symbol of a multi-output node selects among the node's outputs,
      // as NNVM's Symbol.__getitem__ does over list_outputs().
      const auto &outs = base.sym.outputs;
      std::vector<NodeEntry> all = outs;
      if (outs.size() == 1 && outs[0].node->numOutputs() > 1)
        all = outputsOf(outs[0].node);
      int64_t n = static_cast<int64_t>(all.size());
      if (i < -n || i >= n)
        throw errAt(e, cat("index ", i, " is out of range for a symbol with ", n, " output",
                           n == 1 ? "" : "s"));
      return Value::symbol(Symbol{{all[i < 0 ? i + n : i]}});
    }
    if (base.kind == Value::Kind::Tuple || base.kind == Value::Kind::List) {
      int64_t n = static_cast<int64_t>(base.items.size());
      if (i < -n || i >= n)
        throw errAt(e, cat("index ", i, " is out of range for ", kindName(base), " of ", n));
      return base.items[i < 0 ? i + n : i];
    }
    throw errAt(e, cat(kindName(base), " cannot be indexed"));
  }
  }
  throw errAt(e, "internal: unknown expression");
}

Value Evaluator::evalArgument(const std::string &text, int column, const std::string &usage) {
  try {
    auto stmts = parseStatements(text);
    if (stmts.size() != 1 || !stmts[0].target.empty())
      fail("usage: ", usage);
    return eval(*stmts[0].value);
  } catch (const Error &err) {
    if (err.line() == 1)
      throw Error(err.what(), 1, err.col() + column - 1);
    throw;
  }
}

Value Evaluator::binaryOp(const std::string &op, const Value &a, const Value &b, const Expr &at) {
  bool symA = a.kind == Value::Kind::Symbol, symB = b.kind == Value::Kind::Symbol;
  auto call = [&](const char *name, const Value &s, std::vector<std::pair<std::string, Value>> kw,
                  std::vector<Value> extra = {}) {
    std::vector<Value> pos{s};
    for (auto &x : extra)
      pos.push_back(x);
    return callOp(*OpRegistry::get().find(name), name, pos, kw, at);
  };
  if (symA && symB) {
    if (op == "+")
      return call("__add_symbol__", a, {}, {b});
    if (op == "-")
      return call("__sub_symbol__", a, {}, {b});
    if (op == "*")
      return call("__mul_symbol__", a, {}, {b});
    if (op == "/")
      return call("__div_symbol__", a, {}, {b});
    throw errAt(at, "symbol ** symbol needs __pow_symbol__, which NNVM (seed era) does not have");
  }
  if (symA && b.isNumber()) {
    const char *name = op == "+"   ? "__add_scalar__"
                       : op == "-" ? "__sub_scalar__"
                       : op == "*" ? "__mul_scalar__"
                       : op == "/" ? "__div_scalar__"
                                   : "__pow_scalar__";
    return call(name, a, {{"scalar", b}});
  }
  if (a.isNumber() && symB) {
    // Python's reflected operators: __radd__/__rmul__ reuse the forward op.
    const char *name = op == "+"   ? "__add_scalar__"
                       : op == "-" ? "__rsub_scalar__"
                       : op == "*" ? "__mul_scalar__"
                       : op == "/" ? "__rdiv_scalar__"
                                   : "__rpow_scalar__";
    return call(name, b, {{"scalar", a}});
  }
  if (a.isNumber() && b.isNumber()) {
    bool ints = a.kind != Value::Kind::Float && b.kind != Value::Kind::Float;
    double x = a.asDouble(), y = b.asDouble();
    if (op == "/") {
      if (y == 0)
        throw errAt(at, "division by zero");
      return Value::real(x / y);
    }
    if (op == "**") {
      if (ints && y >= 0)
        return Value::integer(static_cast<int64_t>(std::pow(x, y)));
      return Value::real(std::pow(x, y));
    }
    double r = op == "+" ? x + y : op == "-" ? x - y : x * y;
    return ints ? Value::integer(static_cast<int64_t>(r)) : Value::real(r);
  }
  if (op == "+" && a.kind == b.kind &&
      (a.kind == Value::Kind::Str || a.kind == Value::Kind::List || a.kind == Value::Kind::Tuple)) {
    Value r = a;
    r.s += b.s;
    r.items.insert(r.items.end(), b.items.begin(), b.items.end());
    return r;
  }
  throw errAt(at,
              cat("unsupported operand types for ", op, ": ", kindName(a), " and ", kindName(b)));
}

Value Evaluator::callFunction(const Expr &call) {
  std::string callee = stripModule(call.text);
  std::vector<Value> pos;
  for (const auto &x : call.items)
    pos.push_back(eval(*x));
  std::vector<std::pair<std::string, Value>> kw;
  for (const auto &[k, x] : call.kwargs)
    kw.emplace_back(k, eval(*x));

  if (callee == "Variable")
    return makeVariable(call, pos, kw);
  if (callee == "Group") {
    std::vector<Value> syms = pos;
    if (pos.size() == 1 && (pos[0].kind == Value::Kind::List || pos[0].kind == Value::Kind::Tuple))
      syms = pos[0].items;
    if (!kw.empty() || syms.empty())
      throw errAt(call, "Group takes a list of symbols: Group([a, b])");
    Symbol g;
    for (const auto &s : syms) {
      if (s.kind != Value::Kind::Symbol)
        throw errAt(call, cat("Group takes symbols, got ", kindName(s)));
      g.outputs.insert(g.outputs.end(), s.sym.outputs.begin(), s.sym.outputs.end());
    }
    return Value::symbol(std::move(g));
  }
  if (callee == "const") {
    // const(2.0, shape=(1, 10)) or const([[1, 2], [3, 4]]): the value goes into attributes.
    if (pos.size() != 1)
      throw errAt(call, "const takes one value: const(2.0, shape=(1, 10)) or const([1, 2])");
    std::vector<std::pair<std::string, Value>> attrs;
    if (pos[0].isNumber()) {
      attrs.emplace_back("value", Value::real(pos[0].asDouble()));
    } else if (pos[0].kind == Value::Kind::List || pos[0].kind == Value::Kind::Tuple) {
      std::vector<double> flat;
      std::vector<int64_t> dims;
      std::function<void(const Value &, size_t)> walk = [&](const Value &v, size_t depth) {
        if (v.isNumber()) {
          if (depth != dims.size())
            throw errAt(call, "const: the nested lists are ragged");
          flat.push_back(v.asDouble());
          return;
        }
        if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
          throw errAt(call, cat("const: values must be numbers, got ", kindName(v)));
        if (depth == dims.size())
          dims.push_back(static_cast<int64_t>(v.items.size()));
        else if (dims[depth] != static_cast<int64_t>(v.items.size()))
          throw errAt(call, "const: the nested lists are ragged");
        for (const auto &i : v.items)
          walk(i, depth + 1);
      };
      walk(pos[0], 0);
      Value data;
      data.kind = Value::Kind::List;
      for (double d : flat)
        data.items.push_back(Value::real(d));
      attrs.emplace_back("data", data);
      bool hasShape = false;
      for (const auto &[k, v] : kw)
        hasShape |= k == "shape";
      if (!hasShape) {
        Value shape;
        shape.kind = Value::Kind::Tuple;
        for (int64_t d : dims)
          shape.items.push_back(Value::integer(d));
        attrs.emplace_back("shape", shape);
      }
    } else {
      throw errAt(call, cat("const takes a number or a list of numbers, got ", kindName(pos[0])));
    }
    for (const auto &kv : kw)
      attrs.push_back(kv);
    return callOp(*OpRegistry::get().find("const"), "const", {}, attrs, call);
  }
  if (callee == "gradients") {
    // nnvm.compiler.graph_util.gradients(ys, xs): a list with one symbol per x.
    if (pos.size() != 2 || !kw.empty())
      throw errAt(call, "gradients takes two arguments: gradients(ys, xs)");
    Graph g = gradientOf(pos[0], pos[1], call);
    Value out;
    out.kind = Value::Kind::List;
    for (const auto &e : g.outputs())
      out.items.push_back(Value::symbol(Symbol{{e}}));
    return out;
  }
  const OpDef *op = OpRegistry::get().find(callee);
  if (!op) {
    std::vector<std::string> names = OpRegistry::get().names();
    names.push_back("Variable");
    names.push_back("Group");
    names.push_back("gradients");
    throw errAt(call, cat("unknown op '", callee, "'", didYouMean(callee, names)));
  }
  return callOp(*op, callee, pos, kw, call);
}

Graph Evaluator::gradientOf(const Value &ys, const Value &xs, const Expr &at) {
  auto symbols = [&](const Value &v, const char *what) {
    std::vector<NodeEntry> out;
    std::vector<Value> items = v.kind == Value::Kind::List || v.kind == Value::Kind::Tuple
                                   ? v.items
                                   : std::vector<Value>{v};
    for (const auto &i : items) {
      if (i.kind != Value::Kind::Symbol)
        throw errAt(at, cat("gradients: ", what, " must be symbols, got ", kindName(i)));
      out.insert(out.end(), i.sym.outputs.begin(), i.sym.outputs.end());
    }
    if (out.empty())
      throw errAt(at, cat("gradients: no ", what));
    return out;
  };
  std::vector<NodeEntry> y = symbols(ys, "outputs"), x = symbols(xs, "inputs");
  std::vector<NodeEntry> heads;
  for (const auto &e : y) {
    Value h = callOp(*OpRegistry::get().find("ones_like"), "ones_like",
                     {Value::symbol(Symbol{{e}})}, {}, at);
    heads.push_back(h.sym.outputs[0]);
  }
  try {
    return gradientGraph(y, x, heads);
  } catch (const Error &e) {
    throw errAt(at, e.what());
  }
}

Value Evaluator::makeVariable(const Expr &call, const std::vector<Value> &pos,
                              const std::vector<std::pair<std::string, Value>> &kw) {
  std::string name;
  bool named = false;
  if (pos.size() > 1)
    throw errAt(call, "Variable takes one positional argument, the name");
  if (pos.size() == 1) {
    if (pos[0].kind != Value::Kind::Str)
      throw errAt(call, cat("Variable's name must be a string, got ", kindName(pos[0])));
    name = pos[0].s;
    named = true;
  }
  AttrDict attrs;
  for (const auto &[k, v] : kw) {
    if (k == "name") {
      if (named || v.kind != Value::Kind::Str)
        throw errAt(call, "Variable takes exactly one name, a string");
      name = v.s;
      named = true;
      continue;
    }
    if (k == "init")
      throw errAt(call, "Variable(init=…) initialisers are not supported");
    if (v.kind == Value::Kind::Symbol)
      throw errAt(call, cat("attribute '", k, "' of Variable cannot be a symbol"));
    attrs.emplace_back(k, pyStr(v));
  }
  if (!named || name.empty())
    throw errAt(call, "Variable needs a name: Variable(\"x\")");
  NodePtr n = loupe::makeVariable(name, std::move(attrs));
  return Value::symbol(Symbol{{NodeEntry{n, 0, 0}}});
}

Value Evaluator::callOp(const OpDef &op, const std::string &hint,
                        const std::vector<Value> &positional,
                        const std::vector<std::pair<std::string, Value>> &keywords,
                        const Expr &at) {
  std::string where = hint == op.name ? op.name : hint;
  std::vector<Symbol> posSyms;
  for (size_t i = 0; i < positional.size(); ++i) {
    if (positional[i].kind != Value::Kind::Symbol)
      throw errAt(at, cat(where, ": positional argument ", i + 1, " is ", kindName(positional[i]),
                          "; only inputs may be positional, attributes go by keyword"));
    posSyms.push_back(positional[i].sym);
  }
  AttrDict attrs;
  std::vector<std::pair<std::string, Symbol>> kwSyms;
  std::string nodeName;
  for (const auto &[k, v] : keywords) {
    if (k == "name") {
      if (v.kind != Value::Kind::Str || v.s.empty())
        throw errAt(at, cat(where, ": name must be a non-empty string"));
      nodeName = v.s;
    } else if (k == "attr") {
      throw errAt(at, cat(where, ": attr={…} is not supported; pass attributes by keyword"));
    } else if (v.kind == Value::Kind::Symbol) {
      kwSyms.emplace_back(k, v.sym);
    } else {
      attrs.emplace_back(k, pyStr(v));
    }
  }
  if (!posSyms.empty() && !kwSyms.empty())
    throw errAt(at, cat(where, ": inputs must be all positional or all keyword, not both (got ",
                        posSyms.size(), " positional and '", kwSyms[0].first, "' by keyword)"));
  if (!op.keyVarNumArgs.empty() && !findAttr(attrs, op.keyVarNumArgs))
    attrs.emplace_back(op.keyVarNumArgs, std::to_string(posSyms.size()));

  Attrs parsed;
  try {
    parsed = op.parse(attrs, /*strict=*/true);
  } catch (const Error &e) {
    throw errAt(at, cat(where, ": ", e.what()));
  }

  // The NameManager's choice; the counter is committed only when the call succeeds.
  std::string key = lower(hint);
  bool autoNamed = nodeName.empty();
  if (autoNamed)
    nodeName = key + std::to_string(counter(key));

  std::vector<std::string> argNames = op.argNames(parsed);
  std::vector<NodeEntry> inputs;
  auto entryOf = [&](const Symbol &s, const std::string &arg) {
    if (s.outputs.size() != 1)
      throw errAt(at, cat(where, ": input '", arg, "' is a symbol with ", s.outputs.size(),
                          " outputs; select one with [i]"));
    return s.outputs[0];
  };
  std::string argList;
  for (const auto &a : argNames)
    argList += (argList.empty() ? "" : ", ") + a;
  if (op.variadic) {
    if (!kwSyms.empty())
      throw errAt(at, cat(where, " takes its inputs by position"));
    if (posSyms.empty())
      throw errAt(at, cat(where, " needs at least one input"));
    for (size_t i = 0; i < posSyms.size(); ++i)
      inputs.push_back(entryOf(posSyms[i], "input " + std::to_string(i)));
  } else {
    if (posSyms.size() > argNames.size())
      throw errAt(at,
                  cat(where, " takes ", argNames.size(), " input", argNames.size() == 1 ? "" : "s",
                      argList.empty() ? "" : " (" + argList + ")", ", got ", posSyms.size()));
    std::vector<std::optional<NodeEntry>> slots(argNames.size());
    for (size_t i = 0; i < posSyms.size(); ++i)
      slots[i] = entryOf(posSyms[i], argNames[i]);
    for (const auto &[k, s] : kwSyms) {
      auto it = std::find(argNames.begin(), argNames.end(), k);
      if (it == argNames.end())
        throw errAt(at, cat(where, ": unknown input '", k, "'", didYouMean(k, argNames),
                            argList.empty() ? "; it takes no inputs" : "; inputs are " + argList));
      slots[it - argNames.begin()] = entryOf(s, k);
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i]) {
        inputs.push_back(*slots[i]);
        continue;
      }
      // NNVM adds a variable `<node>_<arg>` carrying a copy of the op's attributes.
      NodePtr v = loupe::makeVariable(nodeName + "_" + argNames[i], attrs);
      inputs.push_back({v, 0, 0});
    }
  }
  // Mutated inputs (batch_norm's moving statistics) bump the variable's version.
  for (auto &e : inputs)
    if (e.node->isVariable() && varVersions_.count(e.node.get()))
      e.version = varVersions_.at(e.node.get());
  for (int m : op.mutateInputs)
    if (m < static_cast<int>(inputs.size()) && inputs[m].node->isVariable()) {
      uint32_t &ver = version(inputs[m].node.get());
      inputs[m].version = ++ver;
      keepAlive_.push_back(inputs[m].node);
    }

  NodePtr node;
  try {
    node = makeOpNode(op, nodeName, attrs, std::move(inputs));
  } catch (const Error &e) {
    throw errAt(at, e.what());
  }
  if (autoNamed)
    ++counter(key);
  Symbol out;
  for (uint32_t k = 0; k < node->numVisibleOutputs(); ++k)
    out.outputs.push_back({node, k, 0});
  return Value::symbol(std::move(out));
}

} // namespace loupe
