// FuzzEngine: scripts and session files on arbitrary text, run through the workbench engine —
// the graph language's statements and the commands that work on the graph in memory (:graph,
// :apply, :ir, :nodes, :groups, :why, :setattr, :grad, :undo, …). A bad input must be a clear
// error; a crash, a sanitizer report, another exception or an `internal:` error is a bug.
// Commands that write files, load files or plugins, compile, run kernels or build the zoo's
// networks are skipped: they would make each input slow or touch the machine.
#include "core/Error.h"
#include "repl/Engine.h"
#include "repl/SessionFile.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace {

bool allowed(const std::string &input) {
  static const std::set<std::string> kSkipped = {
      "asm",   "build",    "cache", "dot",     "export",  "llvm",  "load",   "load-pass",
      "lower", "model",    "onnx",  "open",    "profile", "quit",  "record", "run",
      "save",  "schedule", "stop",  "buffers", "history", "timing"};
  size_t at = input.find_first_not_of(" \t");
  if (at == std::string::npos || input[at] != ':')
    return true;
  size_t end = input.find_first_of(" \t\n", at);
  std::string name = input.substr(at + 1, end == std::string::npos ? end : end - at - 1);
  return !kSkipped.count(name);
}

/// Whether an error report is Loupe's own bug rather than bad input: "error: internal: …" at the
/// start of the message (the engine's prefix for an escaped exception or a broken invariant),
/// not merely the word echoed from the input.
bool isInternal(const std::string &err) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.rfind("error: internal:", 0) == 0 ? 0 : line.find(": error: internal:");
    if (at != std::string::npos && (at == 0 || line.find(": error: ") == at))
      return true;
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<loupe::ScriptInput> inputs;
  try {
    inputs = loupe::scriptInputs(text, "<fuzz>"); // a plain script or a session file
  } catch (const loupe::Error &) {
    return 0;
  }
  loupe::Engine engine;
  for (const loupe::ScriptInput &in : inputs) {
    if (!allowed(in.text))
      continue;
    std::ostringstream out, err;
    engine.execute(in.text, out, err, in.line);
    if (isInternal(err.str())) {
      std::fprintf(stderr, "FuzzEngine: line %d: %s\n%s", in.line, in.text.c_str(),
                   err.str().c_str());
      std::abort();
    }
  }
  return 0;
}
