// TextFile: whole-file reads with a binary-data check, and whole-file writes.
#include "repl/TextFile.h"

#include "core/Error.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace loupe {

std::string readTextFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    fail(path, ": cannot open: ", std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad())
    fail(path, ": read error");
  std::string text = ss.str();
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    fail(path, ": not a text file (NUL byte at offset ", nul, ")");
  return text;
}

void writeTextFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    fail(path, ": cannot write: ", std::strerror(errno));
  f << text;
  if (!f)
    fail(path, ": write failed");
}

} // namespace loupe
