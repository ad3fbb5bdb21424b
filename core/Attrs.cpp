// Attrs: parsing of attribute strings in the forms Python's str() produces.
#include "core/Attrs.h"

#include "core/Error.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace loupe {

const std::string *findAttr(const AttrDict &d, const std::string &key) {
  for (const auto &kv : d)
    if (kv.first == key)
      return &kv.second;
  return nullptr;
}

void setAttr(AttrDict &d, const std::string &key, const std::string &value) {
  for (auto &kv : d)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  d.emplace_back(key, value);
}

const ParamValue &Attrs::at(const std::string &k) const {
  auto it = values_.find(k);
  if (it == values_.end())
    fail("internal: attribute '", k, "' is not declared by this op");
  return it->second;
}

template <typename T> static const T &getAs(const ParamValue &v, const std::string &k) {
  if (const T *p = std::get_if<T>(&v))
    return *p;
  fail("internal: attribute '", k, "' has another kind");
}

int64_t Attrs::getInt(const std::string &k) const { return getAs<int64_t>(at(k), k); }
double Attrs::getFloat(const std::string &k) const { return getAs<double>(at(k), k); }
bool Attrs::getBool(const std::string &k) const { return getAs<bool>(at(k), k); }
const std::string &Attrs::getStr(const std::string &k) const {
  return getAs<std::string>(at(k), k);
}
const std::vector<int64_t> &Attrs::getTuple(const std::string &k) const {
  return getAs<std::vector<int64_t>>(at(k), k);
}
const std::vector<std::vector<int64_t>> &Attrs::getPairs(const std::string &k) const {
  return getAs<std::vector<std::vector<int64_t>>>(at(k), k);
}
const std::string &Attrs::raw(const std::string &k) const {
  auto it = raw_.find(k);
  if (it == raw_.end())
    fail("internal: attribute '", k, "' is not declared by this op");
  return it->second;
}

Shape Attrs::shape(const std::string &k) const { return given(k) ? parseShape(raw(k)) : Shape{}; }

void Attrs::set(const std::string &k, ParamValue v, std::string raw, bool given) {
  values_[k] = std::move(v);
  raw_[k] = std::move(raw);
  if (given)
    given_[k] = true;
}

namespace {

std::string trim(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

std::optional<int64_t> toInt(const std::string &t) {
  std::string s = trim(t);
  // Python may write an integer-valued float ("2.0") or an int64 suffix ("2L") in old code.
  if (!s.empty() && s.back() == 'L')
    s.pop_back();
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty())
    return v;
  return std::nullopt;
}

std::optional<double> toFloat(const std::string &t) {
  std::string s = trim(t);
  if (s.empty())
    return std::nullopt;
  if (s == "inf" || s == "+inf")
    return INFINITY;
  if (s == "-inf")
    return -INFINITY;
  if (s == "nan")
    return NAN;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    return std::nullopt;
  return v;
}

// Splits "(a, (b, c), d)" at top-level commas after stripping one bracket pair.
std::optional<std::vector<std::string>> splitTuple(const std::string &text) {
  std::string s = trim(text);
  std::vector<std::string> parts;
  if (s.empty() || s == "None")
    return parts;
  char open = s.front();
  if (open != '(' && open != '[')
    return std::vector<std::string>{s};
  char close = open == '(' ? ')' : ']';
  if (s.back() != close)
    return std::nullopt;
  std::string body = s.substr(1, s.size() - 2);
  int depth = 0;
  std::string cur;
  for (char c : body) {
    if (c == '(' || c == '[')
      ++depth;
    if (c == ')' || c == ']')
      --depth;
    if (depth < 0)
      return std::nullopt;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (depth != 0)
    return std::nullopt;
  if (!trim(cur).empty())
    parts.push_back(trim(cur));
  else if (!parts.empty() && parts.back().empty())
    return std::nullopt;
  for (const auto &p : parts)
    if (p.empty())
      return std::nullopt;
  return parts;
}

} // namespace

std::vector<int64_t> parseIntTuple(const std::string &text) {
  auto parts = splitTuple(text);
  if (!parts)
    fail("expected a tuple of integers such as (1, 2), got '", text, "'");
  std::vector<int64_t> out;
  for (const auto &p : *parts) {
    auto v = toInt(p);
    if (!v)
      fail("expected a tuple of integers such as (1, 2), got '", text, "'");
    out.push_back(*v);
  }
  return out;
}

Shape parseShape(const std::string &text) {
  // A symbolic dimension (`(batch, seq*12, 64)`) is an expression of size symbols; an
  // expression of constants (`(7+1,)`, a bound one written out) is its value.
  auto parts = splitTuple(text);
  if (parts && std::any_of(parts->begin(), parts->end(), [](const std::string &p) {
        return !toInt(p) && std::any_of(p.begin(), p.end(), [](char c) {
          return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '+' || c == '-' ||
                 c == '*' || c == '/' || c == '%';
        });
      })) {
    SymDims dims;
    for (const std::string &p : *parts)
      dims.push_back(SymExpr::parse(p));
    return Shape::symbolic(dims);
  }
  Shape s = parseIntTuple(text);
  size_t at = text.find_first_not_of(" \t");
  if (s.empty() && at != std::string::npos && (text[at] == '(' || text[at] == '['))
    return Shape::scalar();
  return s;
}

ParamValue parseParam(const ParamSpec &spec, const std::string &text) {
  switch (spec.kind) {
  case ParamKind::Int: {
    if (auto v = toInt(text))
      return *v;
    // Python str() of an integral float ("3.0") is accepted, as dmlc's stream parsing did.
    // Within int64's range only (found by fuzzing: "1.8e32" converted out of range).
    if (auto f = toFloat(text); f && std::floor(*f) == *f && *f >= -0x1p63 && *f < 0x1p63)
      return static_cast<int64_t>(*f);
    fail("expected an integer, got '", text, "'");
  }
  case ParamKind::Float:
    if (auto v = toFloat(text))
      return *v;
    fail("expected a number, got '", text, "'");
  case ParamKind::Bool: {
    std::string s = trim(text);
    if (s == "True" || s == "true" || s == "1")
      return true;
    if (s == "False" || s == "false" || s == "0")
      return false;
    fail("expected True or False, got '", text, "'");
  }
  case ParamKind::Str:
    return text;
  case ParamKind::SizeTuple:
    parseShape(text); // checked: integers or expressions of size symbols
    return text;
  case ParamKind::Enum: {
    std::string s = trim(text);
    for (const auto &c : spec.choices)
      if (c == s)
        return s;
    std::string list;
    for (const auto &c : spec.choices)
      list += (list.empty() ? "" : ", ") + c;
    fail("expected one of ", list, ", got '", text, "'");
  }
  case ParamKind::Tuple:
    return parseIntTuple(text);
  case ParamKind::TupleOfPairs: {
    auto parts = splitTuple(text);
    if (!parts)
      fail("expected a tuple of (before, after) pairs, got '", text, "'");
    std::vector<std::vector<int64_t>> out;
    for (const auto &p : *parts) {
      auto pr = parseIntTuple(p);
      if (pr.size() != 2 || (p.front() != '(' && p.front() != '['))
        fail("expected a tuple of (before, after) pairs, got '", text, "'");
      out.push_back(pr);
    }
    return out;
  }
  }
  fail("internal: unknown parameter kind");
}

std::string pyFloatRepr(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: scientific when exp < -4 or >= 16.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  bool neg = mant[0] == '-';
  if (neg)
    mant = mant.substr(1);
  std::string digits;
  for (char c : mant)
    if (c != '.')
      digits += c;
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(-exp - 1, '0') + digits;
  } else {
    int intLen = exp + 1;
    if (static_cast<int>(digits.size()) <= intLen) {
      out = digits + std::string(intLen - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, intLen) + "." + digits.substr(intLen);
    }
  }
  return neg ? "-" + out : out;
}

} // namespace loupe
