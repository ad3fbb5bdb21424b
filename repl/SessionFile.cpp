// SessionFile: parsing, canonical writing, LCS-based unified diffs, and check/bless replays.
#include "repl/SessionFile.h"

#include "core/Error.h"
#include "repl/Engine.h"
#include "repl/GraphLang.h"
#include "repl/TextFile.h"

#include <fstream>
#include <sstream>

namespace loupe {

std::vector<std::string> outputLines(const std::string &text) {
  std::vector<std::string> lines;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur))
    lines.push_back(cur);
  while (!lines.empty() && lines.back().find_first_not_of(" \t\r") == std::string::npos)
    lines.pop_back();
  return lines;
}

Session parseSession(const std::string &text, const std::string &path) {
  Session s;
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
      if (!l.empty() && l.back() == '\r')
        l.pop_back();
      lines.push_back(l);
    }
  }
  std::vector<std::string> pending; // comments/blanks waiting for the next input
  SessionBlock *cur = nullptr;
  bool afterComment = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string &l = lines[i];
    int lineNo = static_cast<int>(i) + 1;
    bool blank = l.find_first_not_of(" \t") == std::string::npos;
    if (l.rfind("> ", 0) == 0 || l == ">") {
      // Blank lines that closed the previous output belong before this input.
      s.blocks.push_back({});
      cur = &s.blocks.back();
      cur->prelude = std::move(pending);
      pending.clear();
      cur->input = l.size() > 2 ? l.substr(2) : "";
      cur->line = lineNo;
      while (i + 1 < lines.size() && (lines[i + 1].rfind(". ", 0) == 0 || lines[i + 1] == ".")) {
        ++i;
        cur->input += "\n" + (lines[i].size() > 2 ? lines[i].substr(2) : "");
      }
      afterComment = false;
      continue;
    }
    if (l.rfind("#", 0) == 0) {
      pending.push_back(l);
      afterComment = true;
      continue;
    }
    if (blank) {
      pending.push_back(l);
      continue;
    }
    if (!cur)
      fail(path, ":", lineNo, ": output line before the first input (inputs start with '> ')");
    if (afterComment)
      fail(path, ":", lineNo, ": output line after a comment; comments go before an input");
    // Blank lines inside an output belong to it.
    for (auto &p : pending)
      cur->expected.push_back(p);
    pending.clear();
    cur->expected.push_back(l);
  }
  s.epilogue = std::move(pending);
  return s;
}

std::string formatExchange(const std::string &input, const std::string &output) {
  std::string out;
  std::istringstream in(input);
  std::string l;
  bool first = true;
  while (std::getline(in, l)) {
    out += (first ? "> " : ". ") + l + "\n";
    first = false;
  }
  if (first)
    out += ">\n";
  for (const auto &o : outputLines(output))
    out += o + "\n";
  return out;
}

std::string formatSession(const Session &s, const std::vector<std::string> &outputs) {
  std::string out;
  for (size_t b = 0; b < s.blocks.size(); ++b) {
    for (const auto &p : s.blocks[b].prelude)
      out += p + "\n";
    out += formatExchange(s.blocks[b].input, outputs[b]);
    // A blank line after an output keeps exchanges readable; it becomes the next prelude.
    const auto &next = b + 1 < s.blocks.size() ? s.blocks[b + 1].prelude : s.epilogue;
    if (!outputLines(outputs[b]).empty() && next.empty() && b + 1 < s.blocks.size())
      out += "\n";
  }
  for (const auto &p : s.epilogue)
    out += p + "\n";
  return out;
}

std::string unifiedDiff(const std::vector<std::string> &a, const std::vector<std::string> &b,
                        const std::string &aName, const std::string &bName) {
  // Longest common subsequence table; the blocks compared are small (one command's output).
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> L(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      L[i][j] = a[i] == b[j] ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  std::string out = "--- " + aName + "\n+++ " + bName + "\n";
  out += cat("@@ -", n ? 1 : 0, ",", n, " +", m ? 1 : 0, ",", m, " @@\n");
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out += " " + a[i] + "\n";
      ++i;
      ++j;
    } else if (i < n && (j == m || L[i + 1][j] >= L[i][j + 1])) {
      out += "-" + a[i++] + "\n"; // deletions first, as diff -u prints them
    } else {
      out += "+" + b[j++] + "\n";
    }
  }
  return out;
}

int checkSession(const std::string &path, bool bless, std::ostream &report,
                 const Engine::Trust &trust, const std::function<void(Engine &)> &prepare) {
  Session s;
  try {
    s = parseSession(readTextFile(path), path);
  } catch (const Error &e) {
    report << "error: " << e.what() << "\n";
    return 2;
  }
  Engine engine;
  try {
    if (prepare)
      prepare(engine);
    engine.setTrust(trust);
  } catch (const Error &e) {
    report << "error: " << e.what() << "\n";
    return 2;
  }
  std::vector<std::string> outputs;
  for (const auto &b : s.blocks) {
    std::ostringstream out;
    engine.execute(b.input, out, out);
    outputs.push_back(out.str());
    if (bless)
      continue;
    auto actual = outputLines(out.str());
    if (actual != b.expected) {
      std::string firstLine = b.input.substr(0, b.input.find('\n'));
      report << path << ":" << b.line << ": output differs for '> " << firstLine << "'\n";
      report << unifiedDiff(b.expected, actual, cat("expected (", path, ":", b.line, ")"),
                            "actual");
      return 1;
    }
  }
  if (bless) {
    try {
      writeTextFile(path, formatSession(s, outputs));
    } catch (const Error &e) {
      report << "error: " << e.what() << "\n";
      return 2;
    }
    report << "blessed " << path << " (" << s.blocks.size() << " inputs)\n";
    return 0;
  }
  report << "ok " << path << " (" << s.blocks.size() << " inputs)\n";
  return 0;
}

std::vector<ScriptInput> InputAssembler::add(const std::string &line) {
  ++lineNo_;
  std::vector<ScriptInput> done;
  size_t b = line.find_first_not_of(" \t\r");
  if (b != std::string::npos && line[b] == ':' && !pending_.empty())
    done = finish();
  if (pending_.empty())
    start_ = lineNo_;
  pending_ += (pending_.empty() ? "" : "\n") + line;
  size_t p = pending_.find_first_not_of(" \t\r");
  if (p == std::string::npos) {
    pending_.clear();
    return done;
  }
  if (pending_[p] != ':' && needsMoreInput(pending_))
    return done;
  done.push_back({pending_, start_});
  pending_.clear();
  return done;
}

std::vector<ScriptInput> InputAssembler::finish() {
  std::vector<ScriptInput> done;
  if (!pending_.empty())
    done.push_back({pending_, start_});
  pending_.clear();
  return done;
}

std::vector<ScriptInput> splitScript(const std::string &text) {
  std::vector<ScriptInput> inputs;
  std::istringstream in(text);
  InputAssembler lines;
  std::string line;
  while (std::getline(in, line))
    for (ScriptInput &i : lines.add(line))
      inputs.push_back(std::move(i));
  for (ScriptInput &i : lines.finish())
    inputs.push_back(std::move(i));
  return inputs;
}

std::vector<ScriptInput> scriptInputs(const std::string &text, const std::string &path) {
  bool session = text.rfind("> ", 0) == 0 || text.find("\n> ") != std::string::npos;
  if (!session)
    return splitScript(text);
  std::vector<ScriptInput> inputs;
  for (const SessionBlock &b : parseSession(text, path).blocks)
    inputs.push_back({b.input, b.line});
  return inputs;
}

} // namespace loupe
