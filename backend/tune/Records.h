// Records: every tuning measurement as one JSON line in a log per target (AutoTVM's tuning log),
// appended atomically so that several processes can tune at once; logs from several machines
// merge by concatenation. `:build` applies the best record of each task (ApplyHistoryBest).
#pragma once

#include "backend/schedule/Space.h"
#include "core/Target.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace loupe::backend {

/// A best point is applied (and reported as better) only when it ran in at most this share of
/// the rule's time: closer is measurement noise, not a better schedule.
inline constexpr double kApplyShare = 0.97;

/// One measurement of one point of one task's space.
struct TuningRecord {
  std::string task;     ///< taskKey
  std::string function; ///< the fused function measured (for people reading the log)
  std::string target;   ///< targetDescription of the CPU it was measured on
  Config config;
  /// "ok"; "wrong" (its output differed from the rule's, never applied); "timeout"; "error"
  /// (it did not compile or run).
  std::string status = "ok";
  double ms = 0;       ///< the best of the repeats
  double ruleMs = 0;   ///< the rule's time in the same session, for the gain
  double gflops = 0;   ///< at `ms`
  std::string message; ///< what went wrong, for a status other than ok
  int trial = 0;       ///< its number among the task's trials
  std::string time;    ///< when (UTC, ISO 8601)
  size_t line = 0;     ///< its line in the file it was read from (1-based; 0 when not read)
  /// Measured by the tuner's confirmation: a task's best and its rule again, alternately, after
  /// the search. Where a task has such records, they decide what :build applies.
  bool confirm = false;
  /// The thread pool's size where it was measured (LOUPE_NUM_THREADS): a point that is fastest
  /// on two threads (a parallel split) need not be on one. 0 in logs written before it was kept:
  /// such a record applies at any thread count.
  int threads = 0;
  /// Measured in the network (`:tune`'s network check): the function's time per call, the
  /// median over runs of the whole built graph, the rule's build and the tuned build taking
  /// turns — the caches as the other kernels leave them. Never a candidate for best(); a point
  /// that ran slower than the rule so is not applied (TuningLog::inNetwork).
  bool network = false;
  /// The point is its schedule's rule (the space's default): a size's gain over its rule can then
  /// be read from the log without that size's space (SizeTransfer).
  bool rule = false;
  /// Measured on a variant of a dynamic build (`:tune … sizes`): the function's family — the same
  /// function of the same symbolic graph, whatever the sizes (taskFamily) — and the sizes bound
  /// ("batch=1, seq=64"); both empty otherwise. A size never tuned builds the point that won at
  /// the nearest size tuned.
  std::string family;
  std::string sizes;
};

/// 16 hex digits of the 64-bit FNV-1a hash of `text`: the keys of tasks and of log files (keys,
/// not a security boundary: a collision would only apply another task's knobs, which schedule the
/// same computation correctly).
std::string hex16(const std::string &text);

/// The description of a target's CPU that a log is kept for and records are matched by: its
/// sizing and its vector features, the LLVM major version and Loupe's schedule revision (a
/// change to the schedules or their spaces bumps it).
std::string targetDescription(const TargetCpu &cpu);

/// A tuning log.
class TuningLog {
public:
  /// `$XDG_CACHE_HOME/loupe/tuning` (or `~/.cache/loupe/tuning`).
  static std::filesystem::path defaultDir();
  /// The file of a target in a folder: `<folder>/<16 hex digits of its description>.jsonl`.
  static std::filesystem::path fileFor(const std::filesystem::path &dir,
                                       const std::string &description);

  /// Reads a log (a missing file is an empty log). A line that is not a record is skipped,
  /// with a one-line warning naming the file and line in `warnings`.
  static TuningLog read(const std::filesystem::path &file, std::vector<std::string> *warnings);

  /// Appends records to `file` in one write under an exclusive lock (flock), creating it and
  /// its folder; throws Error naming the file when it cannot.
  static void append(const std::filesystem::path &file, const std::vector<TuningRecord> &records);

  /// The fastest "ok" record of a task on a target measured at `threads` threads (0: any; a
  /// record that does not say matches any), of the confirmation records only when `confirmed`;
  /// or null.
  const TuningRecord *best(const std::string &task, const std::string &target,
                           bool confirmed = false, int threads = 0) const;
  /// The fastest "ok" record of one point of a task on a target, as best() chooses records;
  /// or null.
  const TuningRecord *fastest(const std::string &task, const std::string &target,
                              const Config &config, bool confirmed = false, int threads = 0) const;
  /// The fastest network-check record of one point of a task on a target at `threads` threads
  /// (0: any), or null.
  const TuningRecord *inNetwork(const std::string &task, const std::string &target,
                                const Config &config, int threads = 0) const;

  std::filesystem::path file;
  std::vector<TuningRecord> records;
};

/// Now in UTC, ISO 8601 to the second: a record's `time`.
std::string utcNow();

/// A record as its JSON line (no newline).
std::string recordToJson(const TuningRecord &r);

/// The record of a JSON line; throws Error with what is wrong.
TuningRecord recordFromJson(const std::string &line);

} // namespace loupe::backend
