// Text: small formatting helpers the front ends share — lists joined and split, counted nouns,
// fixed-point numbers, columns padded by display width.
#include "core/Text.h"

#include <cmath>
#include <cstdio>

namespace loupe {

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

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string significant(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string decibels(double db) {
  if (std::isinf(db))
    return db > 0 ? "inf" : "-inf";
  return fixed(db, 1);
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

} // namespace loupe
