// FuzzJson: a graph JSON file (NNVM's format, as :load reads it) on arbitrary bytes, then shape
// and type inference over what loaded — every op's attribute parsing and shape rules see the
// fuzzed attributes. Bad input must be an Error; anything else is a bug.
#include "core/Error.h"
#include "core/Json.h"
#include "core/Op.h"
#include "passes/Pass.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool registered = [] {
    loupe::registerAllOps();
    loupe::registerAllPasses();
    return true;
  }();
  (void)registered;
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    loupe::Graph g = loupe::loadJSON(text, "<fuzz>");
    (void)loupe::applyPasses(g, {"InferShape", "InferType"});
  } catch (const loupe::Error &) {
  }
  return 0;
}
