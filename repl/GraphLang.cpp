// GraphLang: a hand-written lexer and recursive-descent parser with line:column errors.
#include "repl/GraphLang.h"

#include "core/Error.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace loupe {

namespace {

struct Token {
  enum class Kind { Int, Float, Str, Name, Op, Newline, End };
  Kind kind;
  std::string text;
  int64_t intValue = 0;
  double floatValue = 0;
  int line, col;
};

std::string describe(const Token &t) {
  switch (t.kind) {
  case Token::Kind::End:
    return "end of input";
  case Token::Kind::Newline:
    return "end of line";
  case Token::Kind::Str:
    return "string";
  default:
    return "'" + t.text + "'";
  }
}

class Lexer {
public:
  explicit Lexer(const std::string &s) : s_(s) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    // The brackets open at this point, with where each was opened: an input that ends inside
    // one, or meets a character that cannot be there, is reported at the bracket.
    std::vector<Token> open;
    auto unclosed = [&](const std::string &then) {
      const Token &b = open.back();
      return Error(cat("'", b.text, "' is never closed", then), b.line, b.col);
    };
    while (true) {
      skipSpace(!open.empty());
      if (i_ >= s_.size()) {
        // An input that ends inside brackets: the parser says which bracket is not closed.
        out.push_back({Token::Kind::End, "", 0, 0, line_, col_});
        return out;
      }
      char c = s_[i_];
      int l = line_, co = col_;
      if (c == '\n' || c == ';') {
        advance();
        if (out.empty() || out.back().kind != Token::Kind::Newline)
          out.push_back({Token::Kind::Newline, c == ';' ? ";" : "\\n", 0, 0, l, co});
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i_ + 1 < s_.size() &&
           std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
        out.push_back(number());
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::string w;
        while (i_ < s_.size() &&
               (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
          w += advance();
        out.push_back({Token::Kind::Name, w, 0, 0, l, co});
        continue;
      }
      if (c == '"' || c == '\'') {
        out.push_back(string());
        continue;
      }
      if (c == '*' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        advance();
        advance();
        out.push_back({Token::Kind::Op, "**", 0, 0, l, co});
        continue;
      }
      if (std::string("()[],=+-*/.").find(c) != std::string::npos) {
        advance();
        out.push_back({Token::Kind::Op, std::string(1, c), 0, 0, l, co});
        if (c == '(' || c == '[')
          open.push_back(out.back());
        if ((c == ')' || c == ']') && !open.empty()) {
          const Token &b = open.back();
          if ((c == ')') != (b.text == "("))
            throw Error(cat("'", c, "' does not close the '", b.text, "' opened ",
                            b.line == l
                                ? cat("at column ", b.col)
                                : cat(l - b.line, l - b.line == 1 ? " line" : " lines", " above")),
                        l, co);
          open.pop_back();
        }
        continue;
      }
      std::string what =
          static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f
              ? cat("unexpected byte 0x", hex(static_cast<unsigned char>(c)))
              : cat("unexpected character '", c, "'");
      if (!open.empty() && open.back().line != l)
        throw unclosed(cat(" (", what, " ", l - open.back().line,
                           l - open.back().line == 1 ? " line" : " lines", " below it)"));
      throw Error(what, l, co);
    }
  }

private:
  const std::string &s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;

  static std::string hex(unsigned char c) {
    const char *d = "0123456789abcdef";
    return {d[c >> 4], d[c & 15]};
  }
  char advance() {
    char c = s_[i_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  // Inside brackets a newline is only whitespace, as in Python.
  void skipSpace(bool inBrackets) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n')
          advance();
      } else if (c == ' ' || c == '\t' || c == '\r' || (inBrackets && c == '\n')) {
        advance();
      } else if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        advance();
        advance();
      } else {
        break;
      }
    }
  }
  Token number() {
    int l = line_, co = col_;
    std::string t;
    bool isFloat = false;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
      t += advance();
    if (i_ < s_.size() && s_[i_] == '.') {
      isFloat = true;
      t += advance();
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        t += advance();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      size_t save = i_;
      std::string e(1, advance());
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
        e += advance();
      if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
          e += advance();
        t += e;
        isFloat = true;
      } else {
        i_ = save;
        throw Error(cat("malformed number '", t, e, "'"), l, co);
      }
    }
    if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      throw Error(cat("malformed number '", t, s_[i_], "'"), l, co);
    Token tok{isFloat ? Token::Kind::Float : Token::Kind::Int, t, 0, 0, l, co};
    if (isFloat) {
      tok.floatValue = std::strtod(t.c_str(), nullptr);
    } else {
      errno = 0;
      tok.intValue = std::strtoll(t.c_str(), nullptr, 10);
      if (errno == ERANGE)
        throw Error(cat("integer ", t, " is too large"), l, co);
    }
    return tok;
  }
  Token string() {
    int l = line_, co = col_;
    char q = advance();
    std::string v;
    while (true) {
      if (i_ >= s_.size() || s_[i_] == '\n')
        throw Error("unterminated string", l, co);
      char c = advance();
      if (c == q)
        break;
      if (c == '\\' && i_ < s_.size()) {
        char e = advance();
        switch (e) {
        case 'n':
          v += '\n';
          break;
        case 't':
          v += '\t';
          break;
        default:
          v += e;
        }
        continue;
      }
      v += c;
    }
    return {Token::Kind::Str, v, 0, 0, l, co};
  }
};

class Parser {
public:
  explicit Parser(std::vector<Token> t) : t_(std::move(t)) {}

  std::vector<Stmt> program() {
    std::vector<Stmt> out;
    while (true) {
      while (peek().kind == Token::Kind::Newline)
        ++p_;
      if (peek().kind == Token::Kind::End)
        return out;
      out.push_back(statement());
      if (peek().kind != Token::Kind::Newline && peek().kind != Token::Kind::End)
        throw err(peek(), "expected end of statement, found " + describe(peek()));
    }
  }

private:
  std::vector<Token> t_;
  size_t p_ = 0;

  const Token &peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  bool isOp(const char *op, size_t k = 0) const {
    return peek(k).kind == Token::Kind::Op && peek(k).text == op;
  }
  static Error err(const Token &t, const std::string &msg) { return Error(msg, t.line, t.col); }
  const Token &expectOp(const char *op, const Token &opener) {
    if (!isOp(op)) {
      std::string msg = cat("expected '", op, "' but found ", describe(peek()));
      // Where the bracket was opened, relative to here when on an earlier line: the front end
      // offsets this error's own line to the script's, not lines inside its text.
      int above = peek().line - opener.line;
      if (opener.kind == Token::Kind::Op && above == 0)
        msg += cat(" (to close the '", opener.text, "' at column ", opener.col, ")");
      else if (opener.kind == Token::Kind::Op)
        msg += cat(" (to close the '", opener.text, "' opened ", above,
                   above == 1 ? " line" : " lines", " above, at column ", opener.col, ")");
      throw err(peek(), msg);
    }
    return t_[p_++];
  }

  Stmt statement() {
    Stmt s;
    s.line = peek().line;
    s.col = peek().col;
    if (peek().kind == Token::Kind::Name && isOp("=", 1)) {
      s.target = peek().text;
      p_ += 2;
    }
    s.value = expr();
    if (isOp("="))
      throw err(peek(), "can only assign to a plain name");
    return s;
  }

  ExprPtr make(Expr::Kind k, const Token &at) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = at.line;
    e->col = at.col;
    return e;
  }

  ExprPtr binary(ExprPtr lhs, const Token &op, ExprPtr rhs) {
    auto e = make(Expr::Kind::Binary, op);
    e->text = op.text;
    e->items.push_back(std::move(lhs));
    e->items.push_back(std::move(rhs));
    return e;
  }

  ExprPtr expr() {
    ExprPtr lhs = term();
    while (isOp("+") || isOp("-")) {
      Token op = t_[p_++];
      lhs = binary(std::move(lhs), op, term());
    }
    return lhs;
  }

  ExprPtr term() {
    ExprPtr lhs = unary();
    while (isOp("*") || isOp("/")) {
      Token op = t_[p_++];
      lhs = binary(std::move(lhs), op, unary());
    }
    return lhs;
  }

  // Every nesting (brackets, calls, signs) recurses through here: a limit, as Python's parser
  // has, keeps deep input from overflowing the stack (found by fuzzing: 4,000 '['s).
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;

  ExprPtr unary() {
    if (++depth_ > kMaxDepth)
      throw err(peek(), cat("expression nested more than ", kMaxDepth, " levels deep"));
    struct Leave {
      int &d;
      ~Leave() { --d; }
    } leave{depth_};
    if (isOp("-") || isOp("+")) {
      Token op = t_[p_++];
      auto e = make(Expr::Kind::Unary, op);
      e->text = op.text;
      e->items.push_back(unary());
      return e;
    }
    return power();
  }

  ExprPtr power() {
    ExprPtr base = postfix();
    if (isOp("**")) {
      Token op = t_[p_++];
      return binary(std::move(base), op, unary());
    }
    return base;
  }

  ExprPtr postfix() {
    ExprPtr e = primary();
    while (true) {
      if (isOp("(")) {
        if (e->kind != Expr::Kind::Name)
          throw err(peek(), "only named functions can be called");
        Token open = t_[p_++];
        auto call = make(Expr::Kind::Call, {Token::Kind::Name, "", 0, 0, e->line, e->col});
        call->text = e->text;
        arguments(*call, open);
        e = std::move(call);
      } else if (isOp("[")) {
        Token open = t_[p_++];
        auto ix = make(Expr::Kind::Index, open);
        ix->items.push_back(std::move(e));
        ix->items.push_back(expr());
        expectOp("]", open);
        e = std::move(ix);
      } else {
        return e;
      }
    }
  }

  void arguments(Expr &call, const Token &open) {
    bool sawKeyword = false;
    while (!isOp(")")) {
      if (peek().kind == Token::Kind::End || peek().kind == Token::Kind::Newline)
        expectOp(")", open);
      if (peek().kind == Token::Kind::Name && isOp("=", 1)) {
        std::string k = peek().text;
        int kc = peek().col;
        for (const auto &kw : call.kwargs)
          if (kw.first == k)
            throw err(peek(), "keyword argument '" + k + "' given twice");
        p_ += 2;
        call.kwargs.emplace_back(k, expr());
        call.kwCols.push_back(kc);
        sawKeyword = true;
      } else {
        if (sawKeyword)
          throw err(peek(), "positional argument follows keyword argument");
        call.items.push_back(expr());
      }
      if (!isOp(","))
        break;
      ++p_;
    }
    expectOp(")", open);
  }

  ExprPtr primary() {
    const Token &t = peek();
    switch (t.kind) {
    case Token::Kind::Int: {
      auto e = make(Expr::Kind::Int, t);
      e->intValue = t.intValue;
      ++p_;
      return e;
    }
    case Token::Kind::Float: {
      auto e = make(Expr::Kind::Float, t);
      e->floatValue = t.floatValue;
      ++p_;
      return e;
    }
    case Token::Kind::Str: {
      auto e = make(Expr::Kind::Str, t);
      e->text = t.text;
      ++p_;
      // Adjacent string literals concatenate, as in Python.
      while (peek().kind == Token::Kind::Str)
        e->text += t_[p_++].text;
      return e;
    }
    case Token::Kind::Name: {
      auto e = make(Expr::Kind::Name, t);
      e->text = t.text;
      ++p_;
      while (isOp(".") && peek(1).kind == Token::Kind::Name) {
        e->text += "." + peek(1).text;
        p_ += 2;
      }
      return e;
    }
    case Token::Kind::Op:
      if (t.text == "(" || t.text == "[") {
        Token open = t_[p_++];
        bool isList = open.text == "[";
        const char *close = isList ? "]" : ")";
        std::vector<ExprPtr> items;
        bool trailingComma = false;
        while (!isOp(close)) {
          if (peek().kind == Token::Kind::End || peek().kind == Token::Kind::Newline)
            expectOp(close, open);
          items.push_back(expr());
          trailingComma = false;
          if (!isOp(","))
            break;
          ++p_;
          trailingComma = true;
        }
        expectOp(close, open);
        if (!isList && items.size() == 1 && !trailingComma)
          return std::move(items[0]); // parenthesised expression
        auto e = make(isList ? Expr::Kind::List : Expr::Kind::Tuple, open);
        e->items = std::move(items);
        return e;
      }
      break;
    default:
      break;
    }
    throw err(t, "expected an expression but found " + describe(t));
  }
};

} // namespace

std::vector<Stmt> parseStatements(const std::string &text) {
  Lexer lex(text);
  Parser p(lex.run());
  return p.program();
}

bool needsMoreInput(const std::string &text) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      else if (c == '\n')
        return false; // an unterminated string is an error, not a continuation
      continue;
    }
    if (c == '#')
      while (i < text.size() && text[i] != '\n')
        ++i;
    else if (c == '"' || c == '\'')
      quote = c;
    else if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
  }
  bool backslash = !text.empty() && text.back() == '\\';
  return depth > 0 || backslash;
}

} // namespace loupe
