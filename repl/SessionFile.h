// SessionFile: the session format of DESIGN.md — `> ` inputs (continued with `. `), each
// followed by its exact expected output; `#` lines are comments. Parse, replay, bless, write.
#pragma once

#include "repl/Engine.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace loupe {

/// One input of a session file with its expected output.
struct SessionBlock {
  std::vector<std::string> prelude;  ///< comment and blank lines before the input, kept verbatim
  std::string input;                 ///< the input text (continuation lines joined by '\n')
  int line = 0;                      ///< line of the `> ` in the file
  std::vector<std::string> expected; ///< expected output lines (trailing blank lines dropped)
};

/// A parsed session file.
struct Session {
  std::vector<SessionBlock> blocks;
  std::vector<std::string> epilogue; ///< comment and blank lines after the last block
};

/// Parses session text. Throws Error("FILE:LINE: …") for text that is not a session (output
/// before the first input, output lines after a comment).
Session parseSession(const std::string &text, const std::string &path);

/// Writes a session back in canonical form, with `outputs` (one per block) as expected output.
std::string formatSession(const Session &s, const std::vector<std::string> &outputs);

/// Formats one input/output exchange as session text (used by `:record`).
std::string formatExchange(const std::string &input, const std::string &output);

/// Splits output text into lines and drops trailing blank lines (the comparison unit).
std::vector<std::string> outputLines(const std::string &text);

/// A unified diff of two line lists, with `---`/`+++` headers naming them.
std::string unifiedDiff(const std::vector<std::string> &expected,
                        const std::vector<std::string> &actual, const std::string &expectedName,
                        const std::string &actualName);

/// One input of a plain script, with the line it starts on.
struct ScriptInput {
  std::string text;
  int line = 1;
};

/// Gathers lines into inputs as the REPL and scripts read them: one per line, or several while
/// brackets are open; blank lines are skipped. A `:command` line always starts an input of its
/// own, so an unclosed bracket before it fails alone (naming the line it opened on) instead of
/// swallowing the commands after it.
class InputAssembler {
public:
  /// Adds the next line; returns the inputs it completes (none, one, or two when a `:command`
  /// line ends an unfinished one).
  std::vector<ScriptInput> add(const std::string &line);
  /// The unfinished input at the end of the text, if any.
  std::vector<ScriptInput> finish();
  /// True while an input spans lines (the REPL's continuation prompt).
  bool pending() const { return !pending_.empty(); }

private:
  std::string pending_;
  int lineNo_ = 0, start_ = 1;
};

/// Splits a script into inputs with InputAssembler.
std::vector<ScriptInput> splitScript(const std::string &text);

/// The inputs of a file the tools open as a script: a session file's `> ` inputs when it has
/// any, else the file as a plain script. Throws Error for a malformed session.
std::vector<ScriptInput> scriptInputs(const std::string &text, const std::string &path);

/// Replays a session file in a fresh engine. With `bless`, rewrites the file's expected outputs
/// and returns 0; otherwise stops at the first difference, writes a unified diff to `report`
/// and returns 1. Returns 2 when the file cannot be read or parsed.
/// `trust` is what the session may do (Engine::Trust); `loupe --check` gives a shared session's
/// replay no plugins and writes inside its own folder only, unless the user allows more.
/// `prepare`, when given, readies the fresh engine first (the front end's own commands).
int checkSession(const std::string &path, bool bless, std::ostream &report,
                 const Engine::Trust &trust = {},
                 const std::function<void(Engine &)> &prepare = {});

} // namespace loupe
