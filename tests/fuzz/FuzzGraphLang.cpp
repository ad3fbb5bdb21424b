// FuzzGraphLang: the graph language's parser on arbitrary text. A syntax error must be an Error
// (with its line and column); anything else — a crash, a sanitizer report, another exception,
// a hang — is a bug.
#include "core/Error.h"
#include "repl/GraphLang.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  (void)loupe::needsMoreInput(text);
  try {
    (void)loupe::parseStatements(text);
  } catch (const loupe::Error &) {
    // A clear error is the expected answer to bad input.
  }
  return 0;
}
