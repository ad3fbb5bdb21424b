// Value: what a graph-language expression evaluates to (numbers, strings, tuples, symbols).
#pragma once

#include "core/Graph.h"

#include <string>
#include <vector>

namespace loupe {

/// A graph-language value. Non-symbol values become attribute strings through pyStr(), which
/// reproduces Python's str() (NNVM's Python front end str()-ed every attribute).
struct Value {
  enum class Kind { None, Int, Float, Bool, Str, Tuple, List, Symbol };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<Value> items;
  Symbol sym;

  static Value none() { return {}; }
  static Value integer(int64_t v) {
    Value x;
    x.kind = Kind::Int;
    x.i = v;
    return x;
  }
  static Value real(double v) {
    Value x;
    x.kind = Kind::Float;
    x.f = v;
    return x;
  }
  static Value boolean(bool v) {
    Value x;
    x.kind = Kind::Bool;
    x.b = v;
    return x;
  }
  static Value str(std::string v) {
    Value x;
    x.kind = Kind::Str;
    x.s = std::move(v);
    return x;
  }
  static Value symbol(Symbol v) {
    Value x;
    x.kind = Kind::Symbol;
    x.sym = std::move(v);
    return x;
  }
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  double asDouble() const { return kind == Kind::Float ? f : kind == Kind::Bool ? b : double(i); }
};

/// Python's str() of a value (what becomes an attribute string).
std::string pyStr(const Value &v);

/// Python's repr() of a value; symbols print as `<Symbol relu0>` or `<Symbol group [a, b]>`.
std::string pyRepr(const Value &v);

/// A short name for error messages: "a number", "a string", "a symbol", …
std::string kindName(const Value &v);

} // namespace loupe
