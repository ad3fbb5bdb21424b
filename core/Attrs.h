// Attrs: op attribute dictionaries as written (strings) and their typed, validated form.
#pragma once

#include "core/Shape.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace loupe {

/// A node's attribute dictionary exactly as it was written: string values, in the order they
/// were written. PrintGraphIR prints them in the order NNVM's hash map iterated them
/// (nnvmOrdered, core/AttrOrder.h), which depends on that order and on how the dict was made;
/// SaveJSON sorts by key.
class AttrDict : public std::vector<std::pair<std::string, std::string>> {
public:
  using Base = std::vector<std::pair<std::string, std::string>>;
  AttrDict() = default;
  /// A dict written as a list at once, as NNVM's C++ passes and gradients built one
  /// (MakeNode's initializer list): its map was sized for all the entries before any went in.
  AttrDict(std::initializer_list<value_type> entries) : Base(entries), presized(entries.size()) {}
  /// Entries filled one by one (keyword arguments, a JSON file).
  explicit AttrDict(Base entries) : Base(std::move(entries)) {}
  template <class It> AttrDict(It first, It last) : Base(first, last) {}

  /// How many entries the dict was constructed with at once (0: filled one by one).
  size_t presized = 0;
};

/// Looks a key up in an AttrDict.
const std::string *findAttr(const AttrDict &d, const std::string &key);

/// Sets (or appends) a key in an AttrDict, keeping the position of an existing key.
void setAttr(AttrDict &d, const std::string &key, const std::string &value);

/// How an attribute's string is parsed (the dmlc::Parameter field kinds NNVM ops use).
enum class ParamKind {
  Int,          ///< "3"
  Float,        ///< "0.5", "1e-05"
  Bool,         ///< "True", "False", "true", "1", "0"
  Str,          ///< any string
  Enum,         ///< one of ParamSpec::choices
  Tuple,        ///< "(1, 2)", "[1, 2]", "3", "()": a tuple of ints
  TupleOfPairs, ///< "((0, 0), (1, 1))": pad_width
  /// A tuple of sizes that may be expressions of size symbols ("(seq, batch, 768)"), kept as
  /// its text (read with parseShape): reshape's target in a symbolic graph.
  SizeTuple,
};

/// One declared attribute of an op: its name, kind, default (nullopt = required) and doc.
struct ParamSpec {
  std::string name;
  ParamKind kind;
  std::optional<std::string> dflt;
  std::string doc;
  std::vector<std::string> choices; ///< for Enum
};

/// A parsed attribute value.
using ParamValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                                std::vector<std::vector<int64_t>>>;

/// Parsed, typed attributes of one node (NNVM's `attrs.parsed`): every declared parameter is
/// present, with its default when not written. Accessors throw Error on a kind mismatch, which
/// would be a bug in an op registration, never a user error.
class Attrs {
public:
  int64_t getInt(const std::string &k) const;
  double getFloat(const std::string &k) const;
  bool getBool(const std::string &k) const;
  const std::string &getStr(const std::string &k) const;
  const std::vector<int64_t> &getTuple(const std::string &k) const;
  const std::vector<std::vector<int64_t>> &getPairs(const std::string &k) const;
  /// True if the user wrote this key (as opposed to it taking its default).
  bool given(const std::string &k) const { return given_.count(k) != 0; }
  /// The raw string of a parameter (the written one or the default).
  const std::string &raw(const std::string &k) const;
  /// A tuple parameter read as a tensor's shape (parseShape): `shape=()` written out is a
  /// scalar's; not written, the shape is unknown (NNVM's default `()` meant "not given").
  Shape shape(const std::string &k) const;
  /// Stores a parsed value (used by parseAttrs).
  void set(const std::string &k, ParamValue v, std::string raw, bool given);

private:
  const ParamValue &at(const std::string &k) const;
  std::map<std::string, ParamValue> values_;
  std::map<std::string, std::string> raw_;
  std::map<std::string, bool> given_;
};

/// Parses one attribute string as the given kind; throws Error("expected …") on bad text.
ParamValue parseParam(const ParamSpec &spec, const std::string &text);

/// Parses an integer tuple in Python/NNVM form: "(1, 2)", "[1, 2]", "3", "()", "(3,)", "None".
std::vector<int64_t> parseIntTuple(const std::string &text);

/// Parses a tensor's shape written as parseIntTuple reads it; an empty tuple, "()" or "[]", is
/// the rank-0 shape of a scalar, and "None" an unknown one. A dimension may be an expression of
/// size symbols (`(batch, seq, 768)`): the shape is symbolic.
Shape parseShape(const std::string &text);

/// Formats a double as Python's repr() does ("1.0", "1e-05", "0.1", "inf", "nan").
std::string pyFloatRepr(double v);

} // namespace loupe
