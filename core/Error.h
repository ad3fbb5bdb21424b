// Error: the one exception type the core throws; front ends turn it into a diagnostic line.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace loupe {

/// A user-facing error. The message is one line and says what went wrong and where (a node
/// name, or a line:column that the front end prefixes). Core code throws it; the engine catches
/// it at the command boundary, so a failed command leaves the workbench state unchanged.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &msg, int line = 0, int col = 0)
      : std::runtime_error(msg), line_(line), col_(col) {}
  /// Line in the source text (1-based), or 0 when the error has no text position.
  int line() const { return line_; }
  /// Column in the source text (1-based), or 0.
  int col() const { return col_; }

private:
  int line_, col_;
};

/// Concatenates any streamable values into a string (keeps error sites to one line).
template <typename... Ts> std::string cat(const Ts &...xs) {
  std::ostringstream os;
  (os << ... << xs);
  return os.str();
}

/// Throws an Error whose message is the concatenation of the arguments.
template <typename... Ts> [[noreturn]] void fail(const Ts &...xs) { throw Error(cat(xs...)); }

} // namespace loupe
