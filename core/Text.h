// Text: small formatting helpers the front ends share — lists joined and split, counted nouns,
// fixed-point numbers, columns padded by display width.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loupe {

/// "a,b,c" -> {"a", "b", "c"} (empty pieces kept).
std::vector<std::string> splitList(const std::string &text, char sep);
/// Pads to `w` display columns (UTF-8 aware), at least two spaces.
std::string pad(std::string s, size_t w);
/// The names joined with `sep`.
std::string joinNames(const std::vector<std::string> &v, const char *sep = ", ");
/// "1 node", "3 nodes".
std::string plural(size_t n, const char *word);
/// `v` with `digits` digits after the point ("%.*f").
std::string fixed(double v, int digits);
/// `v` with 6 significant digits ("%.6g": "0.0226484", "1e-07").
std::string significant(double v);
/// `v` in scientific notation with one decimal ("1.2e-07").
std::string sci(double v);
/// A ratio in decibels with one decimal ("26.0"), "inf" or "-inf".
std::string decibels(double db);

} // namespace loupe
