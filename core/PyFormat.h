// PyFormat: Python values as the seeds print them — repr() and pprint.pformat(width=80).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// A Python value: str, int, list or dict (dict items keep insertion order; pformat sorts them
/// by key, as pprint does, while repr keeps the order, as str(dict) does).
struct PyValue {
  enum class Kind { Str, Int, List, Dict };
  Kind kind = Kind::Str;
  std::string str;
  int64_t num = 0;
  std::vector<PyValue> items;
  std::vector<std::pair<std::string, PyValue>> dict;

  static PyValue s(std::string v);
  static PyValue i(int64_t v);
  static PyValue list(std::vector<PyValue> v = {});
  static PyValue dictOf(std::vector<std::pair<std::string, PyValue>> v = {});
};

/// Python's repr() of a str: '…' or "…".
std::string pyStrRepr(const std::string &s);

/// Python's repr()/str() of the value (dicts in insertion order).
std::string pyRepr(const PyValue &v);

/// pprint.pformat(v, width=80): dicts sorted by key, broken across lines as pprint does.
std::string pyPformat(const PyValue &v, int width = 80);

} // namespace loupe
