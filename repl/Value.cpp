// Value: Python-compatible str()/repr() of graph-language values.
#include "repl/Value.h"

#include "core/Attrs.h"
#include "core/PyFormat.h"

namespace loupe {

static std::string symbolRepr(const Symbol &s) {
  if (s.outputs.size() == 1) {
    const NodeEntry &e = s.outputs[0];
    std::string n = e.node->name;
    if (e.node->numOutputs() > 1)
      n += "[" + std::to_string(e.index) + "]";
    return "<Symbol " + n + ">";
  }
  std::string out = "<Symbol group [";
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    const NodeEntry &e = s.outputs[i];
    out += (i ? ", " : "") + e.node->name;
    if (e.node->numOutputs() > 1)
      out += "[" + std::to_string(e.index) + "]";
  }
  return out + "]>";
}

static std::string seq(const Value &v) {
  bool tuple = v.kind == Value::Kind::Tuple;
  std::string out = tuple ? "(" : "[";
  for (size_t i = 0; i < v.items.size(); ++i)
    out += (i ? ", " : "") + pyRepr(v.items[i]);
  if (tuple && v.items.size() == 1)
    out += ",";
  return out + (tuple ? ")" : "]");
}

std::string pyStr(const Value &v) {
  if (v.kind == Value::Kind::Str)
    return v.s;
  return pyRepr(v);
}

std::string pyRepr(const Value &v) {
  switch (v.kind) {
  case Value::Kind::None:
    return "None";
  case Value::Kind::Int:
    return std::to_string(v.i);
  case Value::Kind::Float:
    return pyFloatRepr(v.f);
  case Value::Kind::Bool:
    return v.b ? "True" : "False";
  case Value::Kind::Str:
    return pyStrRepr(v.s);
  case Value::Kind::Tuple:
  case Value::Kind::List:
    return seq(v);
  case Value::Kind::Symbol:
    return symbolRepr(v.sym);
  }
  return "";
}

std::string kindName(const Value &v) {
  switch (v.kind) {
  case Value::Kind::None:
    return "None";
  case Value::Kind::Int:
  case Value::Kind::Float:
    return "a number";
  case Value::Kind::Bool:
    return "a boolean";
  case Value::Kind::Str:
    return "a string";
  case Value::Kind::Tuple:
    return "a tuple";
  case Value::Kind::List:
    return "a list";
  case Value::Kind::Symbol:
    return "a symbol";
  }
  return "a value";
}

} // namespace loupe
