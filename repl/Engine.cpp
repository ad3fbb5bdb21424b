// Engine: executes inputs — graph-language statements are evaluated here, commands are looked
// up in the table of repl/commands/CommandTable.cpp. Errors never escape: they become one
// diagnostic line.
#include "repl/Engine.h"

#include "backend/KernelCache.h"
#include "backend/llvm/HostTarget.h"
#include "backend/tune/Records.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Memory.h"
#include "passes/Gradient.h"
#include "passes/Pass.h"
#include "repl/GraphLang.h"
#include "repl/SessionFile.h"
#include "repl/TextFile.h"
#include "repl/commands/Commands.h"
#include "repl/models/Zoo.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>

namespace loupe {

Engine::Engine() {
  registerAllPasses();
  passContext_.functionNames = &functionNames_;
  passContext_.params = &modelParams_; // what :build binds by name, :apply's passes see too
  backend::installTargetInfo();        // core/Target sizes named CPUs from LLVM's tables
  commands_ = Commands::table();
  kernelCache_ = std::make_shared<backend::KernelCache>();
  setMemoryLimit(0); // :set memory_limit is process-wide; a new engine starts without one
}

std::string Engine::tuningLocation() const {
  if (tuning_ == "off")
    return "";
  if (tuning_ == "on")
    return backend::TuningLog::defaultDir().string();
  return tuning_;
}

void Engine::addCommand(Command c) {
  for (const Command &have : commands_)
    if (have.name == c.name)
      fail("a command :", c.name, " exists already");
  commands_.push_back(std::move(c));
}

void Engine::setTrust(Trust t) {
  std::string resolved;
  if (!t.writeFolder.empty()) {
    std::error_code ec;
    auto folder = std::filesystem::weakly_canonical(std::filesystem::absolute(t.writeFolder), ec);
    if (ec)
      fail("cannot resolve the folder ", t.writeFolder, ": ", ec.message());
    resolved = folder.string();
  }
  trust_ = std::move(t);
  writeFolder_ = std::move(resolved);
}

void Engine::checkWrite(const std::string &command, const std::string &path) const {
  if (writeFolder_.empty())
    return;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path where = fs::weakly_canonical(fs::absolute(path), ec);
  const fs::path folder(writeFolder_);
  bool inside = !ec;
  if (inside) {
    auto [f, w] = std::mismatch(folder.begin(), folder.end(), where.begin(), where.end());
    inside = f == folder.end();
  }
  if (!inside)
    fail(command, command.ends_with("=") ? "" : " ", path, ": outside the session's folder ",
         trust_.writeFolder,
         "; a shared session writes only there unless loupe runs with "
         "--allow-writes");
}

std::string Engine::tuningLogFile(const std::string &targetDescription) const {
  std::string where = tuningLocation();
  std::error_code ec;
  if (where.empty() || (tuning_ != "on" && !std::filesystem::is_directory(where, ec)))
    return where;
  return backend::TuningLog::fileFor(where, targetDescription).string();
}

const Step *Engine::current() const { return history_.empty() ? nullptr : &history_[cursor_]; }

void Engine::moveTo(size_t step) {
  if (step >= history_.size())
    fail("no history step ", step, " (the history has ", history_.size(), ")");
  cursor_ = step;
}

bool Engine::execute(const std::string &input, std::ostream &out, std::ostream &err, int line) {
  std::ostringstream buf;
  bool ok = true;
  std::string trimmed = input;
  size_t b = trimmed.find_first_not_of(" \t\r\n");
  trimmed = b == std::string::npos ? "" : trimmed.substr(b);
  // Snapshot what a failing input could have touched, so a failure changes nothing.
  // A command may touch anything (a statement undoes its own changes, Evaluator::run).
  bool command = !trimmed.empty() && trimmed[0] == ':';
  std::optional<Evaluator::State> bindings;
  std::optional<FunctionNames> functionNames; // GraphFuseCompile names kernels as it goes
  if (command) {
    bindings = evaluator_.save();
    functionNames = functionNames_;
  }
  *sink_ = &buf; // instruments print into this input's output
  try {
    if (command)
      runCommand(trimmed, buf);
    else
      evaluator_.run(input, buf);
    *sink_ = nullptr;
  } catch (const std::exception &ex) {
    *sink_ = nullptr;
    if (command) {
      evaluator_.restore(std::move(*bindings));
      functionNames_ = std::move(*functionNames);
    }
    ok = false;
    std::string msg;
    if (dynamic_cast<const Interrupted *>(&ex)) {
      msg = "interrupted"; // Ctrl-C: not an error in the input
    } else if (const auto *e = dynamic_cast<const Error *>(&ex)) {
      msg = e->what();
      if (e->line() > 0)
        msg = cat(source_, ":", line + e->line() - 1, ":", e->col(), ": error: ", msg);
      else
        msg = "error: " + msg;
    } else {
      // Anything else is a bug in Loupe; it still must not take the session down.
      msg = cat("error: internal: ", ex.what(), " (please report this input)");
    }
    out << buf.str();
    out.flush();
    err << msg << "\n";
    err.flush();
    transcript_.push_back({input, buf.str() + msg + "\n"});
    recordSafely(err);
    return false;
  }
  out << buf.str();
  out.flush();
  bool isRecordCmd = trimmed.rfind(":record", 0) == 0 || trimmed.rfind(":stop", 0) == 0;
  if (!isRecordCmd)
    transcript_.push_back({input, buf.str()});
  recordSafely(err);
  return ok;
}

void Engine::recordSafely(std::ostream &err) {
  try {
    writeRecording();
  } catch (const Error &e) {
    err << "warning: recording stopped: " << e.what() << "\n";
    recordPath_.clear();
  }
}

const Graph &Engine::requireGraph() const {
  if (!current())
    fail("no current graph: make one with :graph NAME or :load FILE");
  return current()->graph;
}

void Engine::pushStep(Graph g, std::string label, double millis, bool fresh) {
  std::string change = describeChange(fresh || history_.empty() ? nullptr : &current()->graph, g);
  if (!history_.empty())
    history_.resize(cursor_ + 1); // a new step drops the redo tail
  history_.push_back({std::move(g), std::move(label), std::move(change), millis, {}, {}, {}});
  cursor_ = history_.size() - 1;
}

void Engine::writeRecording() const {
  if (recordPath_.empty())
    return;
  std::string text = "# Recorded by loupe; replay with: loupe --check " + recordPath_ + "\n";
  for (size_t i = recordFrom_; i < transcript_.size(); ++i)
    text += formatExchange(transcript_[i].input, transcript_[i].output) + "\n";
  writeTextFile(recordPath_, text);
}

void Engine::runCommand(const std::string &text, std::ostream &out) {
  size_t end = text.find_first_of(" \t\n");
  std::string name = text.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  std::string rest = end == std::string::npos ? "" : text.substr(end + 1);
  restColumn_ = end == std::string::npos ? text.size() + 1 : static_cast<int>(end) + 2;
  for (const auto &c : commands_)
    if (c.name == name) {
      c.run(*this, splitArgs(rest), rest, out);
      return;
    }
  std::vector<std::string> names;
  for (const auto &c : commands_)
    names.push_back(c.name);
  fail("unknown command ':", name, "'", didYouMean(name, names), "; :help lists the commands");
}

namespace {

// File and folder names that start with `prefix` (a path as typed); folders end in '/'.
std::vector<std::string> fileNames(const std::string &prefix) {
  namespace fs = std::filesystem;
  size_t slash = prefix.rfind('/');
  std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(base, 0) != 0 || (name[0] == '.' && (base.empty() || base[0] != '.')))
      continue;
    out.push_back(dir + name + (it->is_directory(ec) ? "/" : ""));
  }
  return out;
}

// The command of a line ("apply" for ":apply InferShape"), or "" for a statement.
std::string commandOf(const std::string &line) {
  if (line.empty() || line[0] != ':')
    return "";
  size_t end = line.find_first_of(" \t");
  return end == std::string::npos ? "" : line.substr(1, end - 1);
}

} // namespace

std::vector<std::string> Engine::completions(const std::string &line,
                                             const std::string &word) const {
  std::vector<std::string> pool;
  std::string trimmed = line.substr(0, line.size() - word.size());
  size_t b = trimmed.find_first_not_of(" \t");
  trimmed = b == std::string::npos ? "" : trimmed.substr(b);
  std::string cmd = commandOf(trimmed);
  const Graph *g = current() ? &current()->graph : nullptr;
  auto nodeNames = [&] {
    if (!g)
      return;
    const FusedModule *built = builtPartition(*g);
    const IndexedGraph &idx = (built ? *built->partition : *g).index();
    for (const auto &n : idx.nodes)
      pool.push_back(n.node->name);
  };
  auto functionNames = [&] {
    if (g && g->attr("module"))
      for (const std::string &f : functionOrder(*g))
        pool.push_back(f);
  };
  if (trimmed.empty() && !word.empty() && word[0] == ':') {
    for (const auto &c : commands_)
      pool.push_back(":" + c.name);
  } else if (cmd == "apply" || cmd == "explain" || cmd == "help" || cmd == "pipeline") {
    pool = PassRegistry::get().names();
    if (cmd == "help")
      for (const auto &c : commands_)
        pool.push_back(c.name);
  } else if (cmd == "attr" || cmd == "ir") {
    if (g)
      pool = orderedAttrKeys(g->attrs);
  } else if (cmd == "ops") {
    pool = OpRegistry::get().names();
  } else if (cmd == "why" || cmd == "where") {
    nodeNames();
  } else if (cmd == "lower" || cmd == "schedule" || cmd == "space" || cmd == "llvm" ||
             cmd == "asm" || cmd == "tune") {
    functionNames();
    if (cmd == "tune")
      pool.push_back("all");
  } else if (cmd == "load" || cmd == "save" || cmd == "dot" || cmd == "record" ||
             cmd == "load-pass" || cmd == "export") {
    pool = fileNames(word);
  } else if (cmd == "model") {
    for (const auto &n : models::zoo())
      pool.push_back(n.name);
  } else if (cmd == "run" || cmd == "build") {
    // NAME= before the '=' (the graph's inputs and the options), a file after it.
    size_t eq = word.find('=');
    if (eq != std::string::npos) {
      for (const std::string &f : fileNames(word.substr(eq + 1)))
        pool.push_back(word.substr(0, eq + 1) + f);
    } else {
      // The data inputs: a bound param can be given too, but is rarely what one types.
      if (g)
        for (const Commands::Port &p : Commands::graphInputs(*this, *g))
          if (!p.param)
            pool.push_back(p.name + "=");
      for (const char *o :
           cmd == "run"
               ? std::vector<const char *>{"seed=", "save=", "compare=", "rtol=", "atol=", "top=",
                                           "check="}
               : std::vector<const char *>{"opt_level=", "dtype=", "seed=", "shape", "param"})
        pool.push_back(o);
    }
  } else if (cmd.empty()) {
    pool = OpRegistry::get().names();
    for (const auto &v : variableNames())
      pool.push_back(v);
    pool.push_back("Variable");
    pool.push_back("Group");
  }
  std::vector<std::string> out;
  for (const auto &p : pool)
    if (p.rfind(word, 0) == 0)
      out.push_back(p);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace loupe
