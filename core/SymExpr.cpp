// SymExpr: the canonical polynomial form, floor division by constants, printing and parsing.
#include "core/SymExpr.h"

#include "core/Error.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace loupe {

namespace {

int64_t checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail("size expression: a coefficient overflows 64 bits");
  return r;
}

int64_t checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail("size expression: a coefficient overflows 64 bits");
  return r;
}

// Floor division and its remainder for a positive divisor (C++'s / truncates toward zero).
int64_t floorDivInt(int64_t a, int64_t d) { return a / d - ((a % d != 0) && (a < 0)); }
int64_t floorModInt(int64_t a, int64_t d) { return a - floorDivInt(a, d) * d; }

std::shared_ptr<const SymExpr::Atom> makeAtom(SymExpr::Atom a) {
  return std::make_shared<const SymExpr::Atom>(std::move(a));
}

std::string monomialText(const SymExpr::Monomial &m) {
  std::string s;
  for (const auto &a : m)
    s += (s.empty() ? "" : "*") + a->text;
  return s;
}

} // namespace

bool SymExpr::MonomialLess::operator()(const Monomial &a, const Monomial &b) const {
  // Higher degree first, then by text: `batch*seq` before `seq` before the constant.
  if (a.size() != b.size())
    return a.size() > b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i]->text != b[i]->text)
      return a[i]->text < b[i]->text;
  return false;
}

SymExpr::SymExpr(int64_t c) {
  if (c != 0)
    terms_[{}] = c;
}

SymExpr SymExpr::monomial(const Monomial &m) {
  SymExpr e;
  e.terms_[m] = 1;
  return e;
}

SymExpr SymExpr::symbol(const std::string &name) {
  if (!isSymbolName(name))
    fail("'", name, "' is not a size symbol (a letter or _ first, then letters, digits, _)");
  Atom a;
  a.name = name;
  a.text = name;
  SymExpr e;
  e.terms_[{makeAtom(std::move(a))}] = 1;
  return e;
}

bool SymExpr::isConstant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty());
}

int64_t SymExpr::constant() const { return terms_.empty() ? 0 : terms_.begin()->second; }

std::set<std::string> SymExpr::symbols() const {
  std::set<std::string> out;
  for (const auto &[m, c] : terms_)
    for (const auto &a : m) {
      if (a->kind == Atom::Kind::Symbol)
        out.insert(a->name);
      else
        for (const std::string &s : a->num.symbols())
          out.insert(s);
    }
  return out;
}

int64_t SymExpr::eval(const SymBindings &b) const {
  int64_t sum = 0;
  for (const auto &[m, c] : terms_) {
    int64_t p = c;
    for (const auto &a : m) {
      int64_t v;
      if (a->kind == Atom::Kind::Symbol) {
        auto it = b.find(a->name);
        if (it == b.end())
          fail("size symbol '", a->name, "' is not bound");
        v = it->second;
      } else {
        int64_t n = a->num.eval(b);
        v = a->kind == Atom::Kind::Div ? floorDivInt(n, a->den) : floorModInt(n, a->den);
      }
      p = checkedMul(p, v);
    }
    sum = checkedAdd(sum, p);
  }
  return sum;
}

SymExpr SymExpr::substitute(const SymBindings &b) const {
  SymExpr sum;
  for (const auto &[m, c] : terms_) {
    SymExpr p(c);
    for (const auto &a : m) {
      if (a->kind == Atom::Kind::Symbol) {
        auto it = b.find(a->name);
        p = p * (it == b.end() ? symbol(a->name) : SymExpr(it->second));
      } else {
        SymExpr n = a->num.substitute(b);
        p = p * (a->kind == Atom::Kind::Div ? floorDiv(n, a->den) : mod(n, a->den));
      }
    }
    sum = sum + p;
  }
  return sum;
}

SymExpr operator+(const SymExpr &a, const SymExpr &b) {
  SymExpr r = a;
  for (const auto &[m, c] : b.terms_) {
    int64_t v = checkedAdd(r.terms_[m], c);
    if (v == 0)
      r.terms_.erase(m);
    else
      r.terms_[m] = v;
  }
  return r;
}

bool operator==(const SymExpr &a, const SymExpr &b) {
  if (a.terms_.size() != b.terms_.size())
    return false;
  SymExpr::MonomialLess less;
  for (auto i = a.terms_.begin(), j = b.terms_.begin(); i != a.terms_.end(); ++i, ++j)
    if (i->second != j->second || less(i->first, j->first) || less(j->first, i->first))
      return false;
  return true;
}

SymExpr operator-(const SymExpr &a, const SymExpr &b) { return a + b * SymExpr(-1); }

SymExpr operator*(const SymExpr &a, const SymExpr &b) {
  SymExpr r;
  for (const auto &[ma, ca] : a.terms_)
    for (const auto &[mb, cb] : b.terms_) {
      SymExpr::Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end(), [](const auto &x, const auto &y) { return x->text < y->text; });
      SymExpr t;
      t.terms_[m] = checkedMul(ca, cb);
      r = r + t;
    }
  return r;
}

bool SymExpr::exactDiv(int64_t d, SymExpr *out) const {
  if (d == 0)
    return false;
  SymExpr r;
  for (const auto &[m, c] : terms_) {
    if (c % d != 0)
      return false;
    r.terms_[m] = c / d;
  }
  *out = r;
  return true;
}

int64_t SymExpr::content(SymExpr *primitive) const {
  int64_t g = 0;
  for (const auto &[m, c] : terms_)
    g = std::gcd(g, c);
  if (g == 0) {
    *primitive = SymExpr();
    return 0;
  }
  if (!exactDiv(g, primitive))
    fail("internal: ", str(), " does not divide by its content ", g);
  return g;
}

bool SymExpr::divideBy(const SymExpr &d, SymExpr *quotient) const {
  if (d.terms_.size() != 1)
    return false;
  const auto &[dm, dc] = *d.terms_.begin();
  SymExpr q;
  for (const auto &[m, c] : terms_) {
    if (c % dc != 0)
      return false;
    // m less dm's atoms, each once per occurrence (both are sorted by text).
    Monomial rest;
    size_t j = 0;
    for (const auto &a : m) {
      if (j < dm.size() && dm[j]->text == a->text)
        ++j;
      else
        rest.push_back(a);
    }
    if (j != dm.size())
      return false;
    q = q + monomial(rest) * SymExpr(c / dc);
  }
  *quotient = q;
  return true;
}

namespace {

// a = d*q + r with every coefficient of r in [0, d), for d > 1: floor(a/d) = q + floor(r/d) and
// a mod d = r mod d, exact for every integer value of the symbols.
void splitByDivisor(const SymExpr &a, int64_t d, SymExpr *q, SymExpr *r);

} // namespace

SymExpr SymExpr::floorDiv(const SymExpr &a, int64_t d) {
  if (d <= 0)
    fail("size expression: division by ", d, " (sizes divide by positive constants)");
  if (d == 1)
    return a;
  SymExpr q, r;
  splitByDivisor(a, d, &q, &r);
  if (r.isConstant())
    return q + SymExpr(floorDivInt(r.constant(), d));
  return q + remainderAtom(static_cast<int>(Atom::Kind::Div), r, d);
}

SymExpr SymExpr::mod(const SymExpr &a, int64_t d) {
  if (d <= 0)
    fail("size expression: remainder by ", d, " (sizes divide by positive constants)");
  if (d == 1)
    return SymExpr(0);
  SymExpr q, r;
  splitByDivisor(a, d, &q, &r);
  if (r.isConstant())
    return SymExpr(floorModInt(r.constant(), d));
  return remainderAtom(static_cast<int>(Atom::Kind::Mod), r, d);
}

SymExpr SymExpr::remainderAtom(int k, const SymExpr &r, int64_t d) {
  auto kind = static_cast<Atom::Kind>(k);
  Atom at;
  at.kind = kind;
  at.num = r;
  at.den = d;
  // `seq/2`, `(seq+1)/2`: parentheses unless the numerator is one symbol.
  std::string n = r.str();
  bool bare = r.terms_.size() == 1 && r.terms_.begin()->second == 1 &&
              r.terms_.begin()->first.size() == 1 &&
              r.terms_.begin()->first[0]->kind == Atom::Kind::Symbol;
  at.text = (bare ? n : "(" + n + ")") + (kind == Atom::Kind::Div ? "/" : "%") + std::to_string(d);
  SymExpr e;
  e.terms_[{makeAtom(std::move(at))}] = 1;
  return e;
}

namespace {

void splitByDivisor(const SymExpr &a, int64_t d, SymExpr *q, SymExpr *r) {
  *q = SymExpr(0);
  *r = SymExpr(0);
  for (const auto &[m, c] : a.terms()) {
    SymExpr unit = SymExpr::monomial(m);
    *q = *q + unit * SymExpr(floorDivInt(c, d));
    *r = *r + unit * SymExpr(floorModInt(c, d));
  }
}

} // namespace

std::string SymExpr::str() const {
  if (terms_.empty())
    return "0";
  std::string s;
  for (const auto &[m, c] : terms_) {
    bool neg = c < 0;
    int64_t mag = neg ? -c : c;
    std::string t = m.empty()  ? std::to_string(mag)
                    : mag == 1 ? monomialText(m)
                               : monomialText(m) + "*" + std::to_string(mag);
    if (s.empty())
      s = neg ? "-" + t : t;
    else
      s += (neg ? "-" : "+") + t;
  }
  return s;
}

bool isSymbolName(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  });
}

namespace {

// Recursive descent over + - (lowest), * / %, unary minus, atoms (a number, a symbol, a
// parenthesised expression). `/` and `%` take a constant right side.
class Parser {
public:
  explicit Parser(const std::string &t) : t_(t) {}
  SymExpr parse() {
    SymExpr e = sum();
    skip();
    if (at_ != t_.size())
      error("unexpected '" + std::string(1, t_[at_]) + "'");
    return e;
  }

private:
  const std::string &t_;
  size_t at_ = 0;

  [[noreturn]] void error(const std::string &what) {
    fail("size expression '", t_, "': ", what, " at column ", at_ + 1);
  }
  void skip() {
    while (at_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[at_])))
      ++at_;
  }
  bool eat(char c) {
    skip();
    if (at_ < t_.size() && t_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  SymExpr sum() {
    SymExpr e = product();
    for (;;) {
      if (eat('+'))
        e = e + product();
      else if (eat('-'))
        e = e - product();
      else
        return e;
    }
  }
  SymExpr product() {
    SymExpr e = unary();
    for (;;) {
      if (eat('*')) {
        e = e * unary();
      } else if (eat('/')) {
        e = SymExpr::floorDiv(e, divisor());
      } else if (eat('%')) {
        e = SymExpr::mod(e, divisor());
      } else {
        return e;
      }
    }
  }
  int64_t divisor() {
    size_t start = at_;
    SymExpr d = unary();
    if (!d.isConstant() || d.constant() <= 0) {
      at_ = start;
      skip();
      error("a size divides by a positive constant");
    }
    return d.constant();
  }
  SymExpr unary() {
    if (eat('-'))
      return SymExpr(0) - unary();
    return atom();
  }
  SymExpr atom() {
    skip();
    if (at_ >= t_.size())
      error("expected a number or a symbol");
    if (eat('(')) {
      SymExpr e = sum();
      if (!eat(')'))
        error("expected ')'");
      return e;
    }
    char c = t_[at_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (at_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[at_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, t_[at_] - '0', &v))
          error("the number overflows 64 bits");
        ++at_;
      }
      return SymExpr(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = at_;
      while (at_ < t_.size() &&
             (std::isalnum(static_cast<unsigned char>(t_[at_])) || t_[at_] == '_'))
        ++at_;
      return SymExpr::symbol(t_.substr(start, at_ - start));
    }
    error("unexpected '" + std::string(1, c) + "'");
  }
};

} // namespace

SymExpr SymExpr::parse(const std::string &text) { return Parser(text).parse(); }

} // namespace loupe
