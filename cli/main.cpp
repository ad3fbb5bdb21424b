// loupe: the text REPL of the workbench; also runs scripts, checks and blesses session files, and
// writes a session's report.
#include "backend/tune/Measure.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "repl/Engine.h"
#include "repl/GraphLang.h"
#include "repl/SessionFile.h"
#include "repl/TextFile.h"
#include "report/Report.h"

#include <editline/readline.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <unistd.h>

using namespace loupe;

namespace {

const char *kUsage =
    R"(usage: loupe                        interactive REPL (:help lists the commands)
       loupe FILE...               run scripts (statements and :commands), then exit
       loupe -i FILE               run a script, then continue interactively
       loupe --check SESSION...    replay sessions; on the first difference print a diff, exit 1
       loupe --bless SESSION...    rewrite the sessions' expected outputs
       loupe --report SESSION OUT.html
                                   replay a session and write it as one self-contained HTML file
  A replayed session loads no plugin (:load-pass) and writes files only inside its own folder;
  --allow-plugins and --allow-writes (after --check, --bless or --report) lift that for files
  you trust.
)";

Engine *gEngine = nullptr;

// libedit completion: the engine decides what fits at the cursor. libedit breaks words at
// an expression's operators, '/' and '=' among them; a command's words are paths and node
// names ("/layer1/layer1.0/conv1/Conv", "x=data/x.npy") that break at spaces only, so for a
// command line the engine completes the whole word and libedit is handed the part it sees.
std::vector<std::string> gMatches;
size_t gNext = 0;

char *completionGenerator(const char *, int state) {
  if (state == 0)
    gNext = 0;
  if (gNext >= gMatches.size())
    return nullptr;
  return strdup(gMatches[gNext++].c_str());
}

char **complete(const char *text, int, int) {
  rl_attempted_completion_over = 1;
  std::string line(rl_line_buffer, static_cast<size_t>(rl_point));
  std::string word = text;
  size_t b = line.find_first_not_of(" \t");
  if (b != std::string::npos && line[b] == ':') {
    size_t space = line.find_last_of(" \t");
    word = space == std::string::npos ? line : line.substr(space + 1);
  }
  gMatches = gEngine->completions(line, word);
  size_t cut = word.size() - std::strlen(text); // what libedit does not count as the word
  for (std::string &m : gMatches)
    m = m.substr(cut);
  // A folder or an option is not finished: no space after it.
  rl_completion_append_character =
      gMatches.size() == 1 && (gMatches[0].ends_with('/') || gMatches[0].ends_with('=')) ? '\0'
                                                                                         : ' ';
  return rl_completion_matches(text, completionGenerator);
}

std::string historyPath() {
  if (const char *p = std::getenv("LOUPE_HISTORY"))
    return p;
  if (const char *home = std::getenv("HOME"))
    return std::string(home) + "/.loupe_history";
  return "";
}

// Ctrl-C becomes a request the running command polls (core/Interrupt.h) instead of the end
// of the process. No SA_RESTART: a read blocked at the prompt returns, so the prompt can react.
void onInterrupt(int) { requestInterrupt(); }

void catchInterrupts() {
  struct sigaction sa = {};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

// libedit reads each key through this. Ctrl-C (the signal, or the byte where the terminal
// delivers it as one) ends the read as end of input would; the prompt loop tells the two apart
// by the interrupt flag.
int readKey(FILE *) {
  unsigned char c;
  while (true) {
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n == 1) {
      if (c != 3)
        return c;
      requestInterrupt();
      return EOF;
    }
    if (n < 0 && errno == EINTR && !interruptRequested())
      continue; // another signal (a window resize)
    return EOF;
  }
}

/// Runs a script's text: each input is a line, or several while brackets are open. Ctrl-C
/// stops the running input and the script, as in a shell.
bool runScript(Engine &engine, const std::string &text) {
  bool ok = true;
  for (const ScriptInput &in : splitScript(text)) {
    ok &= engine.execute(in.text, std::cout, std::cerr, in.line);
    if (interruptRequested())
      return false;
    if (engine.quitRequested())
      break;
  }
  return ok;
}

int interactive(Engine &engine) {
  bool tty = isatty(STDIN_FILENO);
  std::string hist = historyPath();
  if (tty) {
    gEngine = &engine;
    rl_catch_signals = 0; // Ctrl-C is ours (readKey), not libedit's, which would re-raise it
    rl_getc_function = readKey;
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = const_cast<char *>(" \t\n()[],=+-*/");
    using_history();
    if (!hist.empty())
      read_history(hist.c_str());
    std::cout << "loupe — the NNVM workbench. :help lists the commands; Ctrl-D quits.\n";
  }
  engine.setSourceName("<stdin>");
  InputAssembler lines;
  bool ok = true;
  while (true) {
    std::string line;
    const char *prompt = lines.pending() ? "  ...> " : "loupe> ";
    if (tty) {
      clearInterrupt();
      char *raw = readline(prompt);
      if (interruptRequested()) {
        // Ctrl-C at the prompt drops the line, and a multi-line input being typed.
        std::free(raw);
        std::cout << "^C\n";
        lines.finish();
        clearInterrupt();
        continue;
      }
      if (!raw)
        break;
      line = raw;
      std::free(raw);
    } else if (!std::getline(std::cin, line)) {
      break;
    }
    for (const ScriptInput &in : lines.add(line)) {
      if (tty)
        add_history(in.text.c_str());
      clearInterrupt();
      ok &= engine.execute(in.text, std::cout, std::cout, tty ? 1 : in.line);
      if (engine.quitRequested() || (!tty && interruptRequested()))
        break;
    }
    if (engine.quitRequested() || (!tty && interruptRequested()))
      break; // input from a pipe: Ctrl-C ends it, as in a shell script
  }
  // Piped input that ends inside a bracket or a statement still runs, so that the error says
  // what was left open.
  if (!tty && !engine.quitRequested() && !interruptRequested())
    for (const ScriptInput &in : lines.finish())
      ok &= engine.execute(in.text, std::cout, std::cout, in.line);
  if (tty) {
    std::cout << "\n";
    if (!hist.empty()) {
      // libedit writes in place; through a temporary file and a rename, an interrupted or
      // failed write leaves the old history intact.
      std::string tmp = hist + ".new";
      if (write_history(tmp.c_str()) == 0)
        std::rename(tmp.c_str(), hist.c_str());
      else
        std::remove(tmp.c_str());
    }
  }
  // Piped input is a script: a failed input fails the run, as it does for a script file.
  return tty || ok ? 0 : 1;
}

} // namespace

// `loupe --report SESSION OUT`: the session replayed (as --check replays it, with `trust`; an
// input that fails is part of the session, shown as it printed) and written as HTML to OUT.
int writeReport(const std::string &session, const std::string &out, const Engine::Trust &trust) {
  try {
    std::vector<ScriptInput> inputs = scriptInputs(readTextFile(session), session);
    Engine engine;
    report::addViewCommands(engine);
    engine.setTrust(trust);
    engine.setSourceName(session);
    std::ostringstream ignored;
    for (const ScriptInput &in : inputs) {
      engine.execute(in.text, ignored, ignored, in.line);
      if (interruptRequested())
        return 130;
    }
    std::string html = report::sessionReport(engine, session);
    writeTextFile(out, html);
    std::cout << "wrote " << out << " (" << engine.history().size() << " steps, "
              << html.size() / 1024 << " KiB)\n";
    return 0;
  } catch (const Error &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}

int main(int argc, char **argv) {
  // The tuner's measuring processes are this executable too (backend/tune/Measure.h).
  if (argc == 2 && std::string(argv[1]) == "--tune-worker")
    return loupe::backend::tuneWorkerMain();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (!args.empty() && (args[0] == "--check" || args[0] == "--bless" || args[0] == "--report")) {
    const std::string mode = args[0];
    // A session may come from anyone: its replay loads no plugin and writes only inside the
    // session's folder unless the user says otherwise.
    bool allowPlugins = false, allowWrites = false;
    std::vector<std::string> files;
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--allow-plugins")
        allowPlugins = true;
      else if (args[i] == "--allow-writes")
        allowWrites = true;
      else if (args[i].starts_with("-")) {
        std::cerr << "error: unknown option '" << args[i] << "'\n" << kUsage;
        return 2;
      } else
        files.push_back(args[i]);
    }
    auto trustFor = [&](const std::string &file) {
      Engine::Trust trust;
      trust.plugins = allowPlugins;
      if (!allowWrites)
        trust.writeFolder = std::filesystem::path(file).has_parent_path()
                                ? std::filesystem::path(file).parent_path().string()
                                : ".";
      return trust;
    };
    if (mode == "--report") {
      if (files.size() != 2) {
        std::cerr << "error: --report needs a session and the HTML file to write\n" << kUsage;
        return 2;
      }
      return writeReport(files[0], files[1], trustFor(files[0]));
    }
    if (files.empty()) {
      std::cerr << "error: " << mode << " needs at least one session file\n" << kUsage;
      return 2;
    }
    int rc = 0;
    for (const std::string &file : files)
      rc = std::max(rc, checkSession(file, mode == "--bless", rc ? std::cerr : std::cout,
                                     trustFor(file), report::addViewCommands));
    return rc;
  }
  Engine engine;
  report::addViewCommands(engine);
  engine.setTuning("on"); // the records this machine's :tune wrote (session replays: off)
  catchInterrupts();
  // On a terminal, long commands show a status line that is erased when they end; output that
  // goes to a file or a pipe never has it.
  if (isatty(STDOUT_FILENO) && isatty(STDERR_FILENO))
    engine.setProgress([](const std::string &status, double) {
      std::cerr << "\r" << status << "\033[K" << std::flush;
    });
  bool thenInteractive = false;
  if (!args.empty() && args[0] == "-i") {
    thenInteractive = true;
    args.erase(args.begin());
    if (args.empty()) {
      std::cerr << "error: -i needs a script\n" << kUsage;
      return 2;
    }
  }
  for (const auto &a : args)
    if (!a.empty() && a[0] == '-') {
      std::cerr << "error: unknown option '" << a << "'\n" << kUsage;
      return 2;
    }
  bool ok = true;
  for (const auto &path : args) {
    std::string text;
    try {
      text = readTextFile(path);
    } catch (const Error &e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    }
    engine.setSourceName(path);
    ok &= runScript(engine, text);
    if (interruptRequested())
      return 130; // as a shell reports a script stopped by SIGINT
    if (engine.quitRequested())
      return ok ? 0 : 1;
  }
  if (args.empty() || thenInteractive)
    return interactive(engine);
  return ok ? 0 : 1;
}
