// PyFormat: a faithful re-implementation of repr() and pprint's layout for str/int/list/dict.
#include "core/PyFormat.h"

#include <algorithm>

namespace loupe {

PyValue PyValue::s(std::string v) {
  PyValue p;
  p.kind = Kind::Str;
  p.str = std::move(v);
  return p;
}
PyValue PyValue::i(int64_t v) {
  PyValue p;
  p.kind = Kind::Int;
  p.num = v;
  return p;
}
PyValue PyValue::list(std::vector<PyValue> v) {
  PyValue p;
  p.kind = Kind::List;
  p.items = std::move(v);
  return p;
}
PyValue PyValue::dictOf(std::vector<std::pair<std::string, PyValue>> v) {
  PyValue p;
  p.kind = Kind::Dict;
  p.dict = std::move(v);
  return p;
}

std::string pyStrRepr(const std::string &s) {
  bool useDouble = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  char q = useDouble ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

static std::vector<std::pair<std::string, PyValue>> sortedItems(const PyValue &v) {
  auto items = v.dict;
  std::stable_sort(items.begin(), items.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  return items;
}

static std::string repr(const PyValue &v, bool sortDicts) {
  switch (v.kind) {
  case PyValue::Kind::Str:
    return pyStrRepr(v.str);
  case PyValue::Kind::Int:
    return std::to_string(v.num);
  case PyValue::Kind::List: {
    std::string s = "[";
    for (size_t i = 0; i < v.items.size(); ++i)
      s += (i ? ", " : "") + repr(v.items[i], sortDicts);
    return s + "]";
  }
  case PyValue::Kind::Dict: {
    std::string s = "{";
    auto items = sortDicts ? sortedItems(v) : v.dict;
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ", " : "") + pyStrRepr(items[i].first) + ": " + repr(items[i].second, sortDicts);
    return s + "}";
  }
  }
  return "";
}

std::string pyRepr(const PyValue &v) { return repr(v, false); }

namespace {

// pprint.PrettyPrinter._format and friends, with indent_per_level = 1 and compact = False.
struct Pretty {
  int width;
  std::string out;

  void format(const PyValue &v, int indent, int allowance) {
    std::string rep = repr(v, true);
    int maxWidth = width - indent - allowance;
    if (static_cast<int>(rep.size()) > maxWidth) {
      if (v.kind == PyValue::Kind::List && !v.items.empty()) {
        out += '[';
        items(v.items, indent, allowance + 1);
        out += ']';
        return;
      }
      if (v.kind == PyValue::Kind::Dict && !v.dict.empty()) {
        out += '{';
        dictItems(sortedItems(v), indent, allowance + 1);
        out += '}';
        return;
      }
    }
    out += rep;
  }

  void items(const std::vector<PyValue> &xs, int indent, int allowance) {
    indent += 1;
    std::string delimnl = ",\n" + std::string(indent, ' ');
    for (size_t i = 0; i < xs.size(); ++i) {
      bool last = i + 1 == xs.size();
      if (i)
        out += delimnl;
      format(xs[i], indent, last ? allowance : 1);
    }
  }

  void dictItems(const std::vector<std::pair<std::string, PyValue>> &xs, int indent,
                 int allowance) {
    indent += 1;
    std::string delimnl = ",\n" + std::string(indent, ' ');
    for (size_t i = 0; i < xs.size(); ++i) {
      bool last = i + 1 == xs.size();
      std::string key = pyStrRepr(xs[i].first);
      out += key + ": ";
      format(xs[i].second, indent + static_cast<int>(key.size()) + 2, last ? allowance : 1);
      if (!last)
        out += delimnl;
    }
  }
};

} // namespace

std::string pyPformat(const PyValue &v, int width) {
  Pretty p{width, {}};
  p.format(v, 0, 0);
  return p.out;
}

} // namespace loupe
