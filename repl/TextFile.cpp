// TextFile: whole-file reads with a binary-data check, and atomic whole-file writes.
#include "repl/TextFile.h"

#include "core/Error.h"
#include "core/File.h"

namespace loupe {

std::string readTextFile(const std::string &path) {
  std::string text = readFile(path);
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    fail(path, ": not a text file (NUL byte at offset ", nul, ")");
  return text;
}

void writeTextFile(const std::string &path, const std::string &text) {
  writeFileAtomically(path, text);
}

} // namespace loupe
