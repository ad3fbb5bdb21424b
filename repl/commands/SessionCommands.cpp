// SessionCommands: the commands of the session — :help, :set, the history (:history, :undo, :redo,
// :diff) and its recording (:record, :stop), :quit.
#include "backend/Build.h"
#include "backend/KernelCache.h"
#include "backend/tune/Records.h"
#include "core/Error.h"
#include "core/Printer.h"
#include "core/Target.h"
#include "passes/FakeQuantization.h"
#include "passes/MixedPrecision.h"
#include "repl/SessionFile.h"
#include "repl/commands/Commands.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// The session topic's command handlers (the session: help, options, history, recording): a member
/// of Commands, so they reach the engine as Commands does.
struct Commands::SessionTopic {
  static void help(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void set(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void diff(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void history(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void undo(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void redo(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void record(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void stop(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void quit(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

void Commands::SessionTopic::help(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 0, 1, ":help [CMD]");
  if (a.size() == 1) {
    std::string n = a[0][0] == ':' ? a[0].substr(1) : a[0];
    for (const auto &c : e.commands_)
      if (c.name == n) {
        out << ":" << c.name << (c.usage.empty() ? "" : " " + c.usage) << "\n  " << c.summary
            << "\n";
        return;
      }
    if (const PassInfo *p = PassRegistry::get().find(n)) {
      out << p->name << ": " << p->summary << "\n";
      return;
    }
    if (const OpDef *op = OpRegistry::get().find(n)) {
      printOpDetails(*op, out);
      return;
    }
    std::vector<std::string> names;
    for (const auto &c : e.commands_)
      names.push_back(c.name);
    fail("no command, pass or op named '", n, "'", didYouMean(n, names));
  }
  out << "Statements build symbols, as nnvm.symbol does:\n"
      << "  x = Variable(\"x\", shape=(1, 3, 32, 32))\n"
      << "  y = relu(conv2d(data=x, channels=8, kernel_size=(3, 3)))\n"
      << "Commands:\n";
  for (const auto &c : e.commands_)
    out << "  " << pad(":" + c.name + (c.usage.empty() ? "" : " " + c.usage), 26) << c.summary
        << "\n";
}

void Commands::SessionTopic::set(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  PassContext &c = e.passContext_;
  if (a.empty()) {
    std::string nofuse;
    for (const auto &op : c.noFuse)
      nofuse += (nofuse.empty() ? "" : ",") + op;
    out << "opt_level " << c.optLevel << "\nfuse_opt_level " << c.get("fuse_opt_level", "-1")
        << "\nfusion_rules " << c.get("fusion_rules", "A") << "\nnofuse "
        << (nofuse.empty() ? "none" : nofuse) << "\ntarget " << c.get("target", "llvm")
        << "\ntuning " << e.tuning_ << "\n";
    if (e.denormals_ != "auto")
      out << "denormals " << e.denormals_ << "\n";
    if (e.precision_ != "fp32")
      out << "precision " << e.precision_ << "\n";
    if (c.config.count("requantize"))
      out << "requantize " << c.config.at("requantize") << "\n";
    if (memoryLimitBytes())
      out << "memory_limit " << formatBytes(static_cast<double>(memoryLimitBytes())) << "\n";
    if (e.hideTimings_)
      out << "timings hidden\n";
    if (!c.disabledPass.empty())
      out << "disabled_pass " << joinNames({c.disabledPass.begin(), c.disabledPass.end()}, ",")
          << "\n";
    return;
  }
  // A target string has options after its kind: "llvm -mcpu=skylake-avx512".
  needArgs(a, 2, a[0] == "target" ? a.size() : 2, ":set KEY VALUE");
  const std::string &k = a[0];
  std::string v = a[1];
  for (size_t i = 2; i < a.size(); ++i)
    v += " " + a[i];
  if (k == "opt_level") {
    if (v.size() != 1 || v[0] < '0' || v[0] > '3')
      fail("opt_level must be 0, 1, 2 or 3, got '", v, "'");
    c.optLevel = v[0] - '0';
  } else if (k == "fuse_opt_level") {
    if (v != "-1" && (v.size() != 1 || v[0] < '0' || v[0] > '3'))
      fail("fuse_opt_level must be -1 (follow opt_level) or 0-3, got '", v, "'");
    c.config["fuse_opt_level"] = v;
  } else if (k == "fusion_rules") {
    if (v != "A" && v != "B" && v != "C")
      fail("fusion_rules must be A (seed era), B (diamond fusion) or C (v0.5), got '", v, "'");
    c.config["fusion_rules"] = v;
  } else if (k == "nofuse") {
    std::set<std::string> ops;
    if (v != "none")
      for (const auto &op : splitList(v, ',')) {
        if (!OpRegistry::get().find(op))
          fail("unknown op '", op, "'", didYouMean(op, OpRegistry::get().names()));
        ops.insert(OpRegistry::get().find(op)->name);
      }
    c.noFuse = ops;
  } else if (k == "target") {
    checkTarget(v);
    c.config["target"] = v;
  } else if (k == "memory_limit") {
    setMemoryLimit(v == "none" ? 0 : parseBytes(v));
  } else if (k == "cache") {
    if (v == "off") {
      e.kernelCache_.reset();
    } else if (v == "on") {
      if (!e.kernelCache_)
        e.kernelCache_ = std::make_shared<backend::KernelCache>();
    } else if (v == "clear") {
      (e.kernelCache_ ? *e.kernelCache_ : backend::KernelCache()).clear();
      out << "kernel cache cleared\n";
      return;
    } else {
      fail("cache must be on, off or clear, got '", v, "'");
    }
  } else if (k == "tuning") {
    if (v != "on" && v != "off") {
      // A log to apply (and for :tune to add to): its damaged lines are warnings here; a file
      // that does not exist yet is one :tune will start, in a folder that must exist.
      std::filesystem::path file(v);
      std::error_code ec;
      if (std::filesystem::is_directory(file, ec))
        fail("tuning log '", v, "' is a folder; name a .jsonl file, or on for the default");
      if (!std::filesystem::exists(file, ec)) {
        if (file.has_parent_path() && !std::filesystem::is_directory(file.parent_path(), ec))
          fail("tuning log '", v, "': no folder ", file.parent_path().string());
      } else {
        std::vector<std::string> warnings;
        backend::TuningLog log = backend::TuningLog::read(file, &warnings);
        for (const std::string &w : warnings)
          out << w << "\n";
        out << "tuning log " << v << ": " << plural(log.records.size(), "record") << "\n";
      }
    }
    e.tuning_ = v;
  } else if (k == "disabled_pass") {
    // The passes :build may leave out (the others make the build).
    const std::vector<std::string> &optional = backend::optionalPasses();
    std::set<std::string> names;
    if (v != "none")
      for (const std::string &p : splitList(v, ',')) {
        if (std::find(optional.begin(), optional.end(), p) == optional.end())
          fail("disabled_pass: '", p, "' is not a pass :build may leave out",
               didYouMean(p, optional), "; those are ", joinNames(optional, ", "));
        names.insert(p);
      }
    c.disabledPass = names;
  } else if (k == "denormals") {
    if (v != "auto" && v != "keep" && v != "flush")
      fail("denormals must be auto (flushed at opt_level 3, kept below), keep or flush, got '", v,
           "'");
    e.denormals_ = v;
  } else if (k == "precision") {
    bfloat16Precision(v); // the value checked as :build checks it
    e.precision_ = v;
    // What AlterOpLayout reads when applied by hand, as :build gives it at opt_level 3.
    c.config["precision"] = v;
  } else if (k == "requantize") {
    PassContext trial;
    trial.config["requantize"] = v;
    requantizeComputeDtype(trial); // the value checked as FakeQuantizationToInteger checks it
    c.config["requantize"] = v;
  } else if (k == "timings") {
    if (v != "shown" && v != "hidden")
      fail("timings must be shown or hidden, got '", v, "'");
    e.hideTimings_ = v == "hidden";
  } else {
    fail("unknown option '", k, "'",
         didYouMean(k, {"opt_level", "fuse_opt_level", "fusion_rules", "nofuse", "target", "cache",
                        "memory_limit", "tuning", "timings", "disabled_pass", "denormals",
                        "precision", "requantize"}),
         "; options are opt_level, fuse_opt_level, fusion_rules, nofuse, target, cache, "
         "memory_limit, tuning, timings, disabled_pass, denormals, precision, requantize");
  }
  out << k << " = " << v << "\n";
}

void Commands::SessionTopic::diff(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 0, 2, ":diff [A] [B]");
  if (e.history_.empty())
    fail("no history yet: make a graph with :graph NAME");
  auto step = [&](const std::string &s) {
    size_t n = 0;
    try {
      n = std::stoul(s);
    } catch (...) {
      fail("step must be a number, got '", s, "'");
    }
    if (n >= e.history_.size())
      fail("no step ", n, " (the history has ", e.history_.size(), " steps)");
    return n;
  };
  size_t from, to;
  if (a.empty()) {
    if (e.cursor_ == 0)
      fail("step 0 has no previous step; give two steps: :diff A B");
    from = e.cursor_ - 1;
    to = e.cursor_;
  } else if (a.size() == 1) {
    from = step(a[0]);
    to = e.cursor_;
  } else {
    from = step(a[0]);
    to = step(a[1]);
  }
  const Graph &ga = e.history_[from].graph, &gb = e.history_[to].graph;
  out << "step " << from << " (" << e.history_[from].label << ") -> step " << to << " ("
      << e.history_[to].label << "): " << describeEffects(ga, gb) << "\n";
  auto lines = [](const Graph &g) { return outputLines(printGraphIR(g)); };
  auto la = lines(ga), lb = lines(gb);
  if (la != lb)
    out << unifiedDiff(la, lb, cat("step ", from), cat("step ", to));
}

void Commands::SessionTopic::history(Engine &e, const Args &a, const std::string &,
                                     std::ostream &out) {
  needArgs(a, 0, 1, ":history [times]");
  bool times = a.size() == 1;
  if (times && a[0] != "times")
    fail("usage: :history [times]");
  if (e.history_.empty()) {
    out << "(no steps yet)\n";
    return;
  }
  for (size_t i = 0; i < e.history_.size(); ++i) {
    const Step &s = e.history_[i];
    out << (i == e.cursor_ ? "* " : "  ") << pad(std::to_string(i), 3) << pad(s.label, 36)
        << s.change;
    if (times) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " [%.3f ms]", s.millis);
      out << buf;
    }
    out << "\n";
  }
}

void Commands::SessionTopic::undo(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 0, 0, ":undo");
  if (e.history_.empty() || e.cursor_ == 0)
    fail("nothing to undo");
  --e.cursor_;
  out << "now at step " << e.cursor_ << ": " << e.history_[e.cursor_].label << "\n";
}

void Commands::SessionTopic::redo(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 0, 0, ":redo");
  if (e.history_.empty() || e.cursor_ + 1 >= e.history_.size())
    fail("nothing to redo");
  ++e.cursor_;
  out << "now at step " << e.cursor_ << ": " << e.history_[e.cursor_].label << "\n";
}

void Commands::SessionTopic::record(Engine &e, const Args &a, const std::string &,
                                    std::ostream &out) {
  needArgs(a, 1, 1, ":record FILE");
  e.checkWrite(":record", a[0]);
  std::string old = e.recordPath_;
  e.recordPath_ = a[0];
  e.recordFrom_ = 0;
  try {
    e.writeRecording();
  } catch (...) {
    e.recordPath_ = old;
    throw;
  }
  out << "recording to " << a[0] << " (" << e.transcript_.size() << " inputs so far)\n";
}

void Commands::SessionTopic::stop(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 0, 0, ":stop");
  if (e.recordPath_.empty())
    fail("not recording (start with :record FILE)");
  out << "stopped recording " << e.recordPath_ << " (" << e.transcript_.size() - e.recordFrom_
      << " inputs)\n";
  e.recordPath_.clear();
}

void Commands::SessionTopic::quit(Engine &e, const Args &a, const std::string &, std::ostream &) {
  needArgs(a, 0, 0, ":quit");
  e.quit_ = true;
}

std::vector<Commands::Listed> Commands::sessionCommands() {
  using T = SessionTopic;
  return {
      {"", {"help", "[CMD]", "lists the commands, or describes one", T::help}},
      {"apply",
       {"set", "[KEY VALUE]",
        "sets an option: opt_level N, fuse_opt_level N (FuseOps; -1 follows opt_level), "
        "fusion_rules A|B|C, nofuse OP[,OP]|none, target llvm [-mcpu=NAME] [-mattr=+F,-G], "
        "memory_limit SIZE|none (what allocations are checked against instead of the machine's "
        "memory), precision fp32|bf16 (what :build computes convolutions and matrix products in), "
        "tuning on|off|FILE (the records :build applies and :tune adds to), timings "
        "shown|hidden (:profile's measured figures and :where's host instruction counts as "
        "dashes, for sessions), disabled_pass P[,P]|none (passes :build leaves out), denormals "
        "auto|keep|flush (the next :build's kernels flush subnormals to zero, or keep IEEE "
        "arithmetic; auto flushes at opt_level 3), requantize float32|int64 (how integer "
        "regions of QDQ graphs rescale: float32 as ONNX Runtime rounds, or TVM's fixed point)",
        T::set}},
      {"explain",
       {"diff", "[A] [B]", "what changed between two history steps (default: the last step)",
        T::diff}},
      {"save",
       {"history", "[times]", "lists the history steps; * marks the current one", T::history}},
      {"history", {"undo", "", "goes back one history step", T::undo}},
      {"undo", {"redo", "", "goes forward one history step", T::redo}},
      {"redo",
       {"record", "FILE", "writes the session so far to FILE and keeps recording until :stop",
        T::record}},
      {"record", {"stop", "", "stops recording", T::stop}},
      {"stop", {"quit", "", "ends the REPL or the script (as Ctrl-D does at the prompt)", T::quit}},
  };
}

} // namespace loupe
