// Records: the tuning log's JSON lines, read leniently (a damaged line is skipped with a warning)
// and appended under flock.
#include "backend/tune/Records.h"

#include "core/Error.h"
#include "core/File.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

namespace loupe::backend {

namespace {

// Bumped when a schedule or its knobs change what a point means, so that old records are kept
// apart instead of applied to a different schedule.
constexpr const char *kScheduleRevision = "schedules-1";

// LLVM's major version, which the code a record measured depends on (minor versions do not
// change which point is fastest enough to keep separate logs).
constexpr const char *kLlvmMajor = "llvm-19";

} // namespace

std::string hex16(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string targetDescription(const TargetCpu &cpu) {
  std::string d = cpu.isa() + " " + std::to_string(cpu.vectorBytes) + "B x" +
                  std::to_string(cpu.registers) + (cpu.broadcastOperand ? " bcast" : "") +
                  " l2=" + std::to_string(cpu.l2Bytes >> 10) + "K";
  return d + " " + kLlvmMajor + " " + kScheduleRevision;
}

std::filesystem::path TuningLog::defaultDir() {
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  std::filesystem::path base = xdg && *xdg ? std::filesystem::path(xdg)
                               : home      ? std::filesystem::path(home) / ".cache"
                                           : std::filesystem::temp_directory_path();
  return base / "loupe" / "tuning";
}

std::filesystem::path TuningLog::fileFor(const std::filesystem::path &dir,
                                         const std::string &description) {
  return dir / (hex16(description) + ".jsonl");
}

std::string recordToJson(const TuningRecord &r) {
  nlohmann::json config = nlohmann::json::object();
  for (const auto &[k, v] : r.config)
    config[k] = v;
  nlohmann::json j = {{"v", 1},
                      {"task", r.task},
                      {"function", r.function},
                      {"target", r.target},
                      {"config", config},
                      {"status", r.status},
                      {"ms", r.ms},
                      {"rule_ms", r.ruleMs},
                      {"gflops", r.gflops},
                      {"trial", r.trial},
                      {"time", r.time}};
  if (!r.message.empty())
    j["message"] = r.message;
  if (r.confirm)
    j["confirm"] = true;
  if (r.threads > 0)
    j["threads"] = r.threads;
  if (r.network)
    j["network"] = true;
  if (r.rule)
    j["rule"] = true;
  if (!r.family.empty()) {
    j["family"] = r.family;
    j["sizes"] = r.sizes;
  }
  return j.dump();
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

TuningRecord recordFromJson(const std::string &line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded())
    fail("not JSON");
  if (!j.is_object())
    fail("not a JSON object");
  if (j.value("v", 0) != 1)
    fail("not a version 1 record");
  TuningRecord r;
  try {
    r.task = j.at("task").get<std::string>();
    r.function = j.value("function", std::string());
    r.target = j.at("target").get<std::string>();
    r.status = j.at("status").get<std::string>();
    r.ms = j.at("ms").get<double>();
    r.ruleMs = j.value("rule_ms", 0.0);
    r.gflops = j.value("gflops", 0.0);
    r.trial = j.value("trial", 0);
    r.time = j.value("time", std::string());
    r.message = j.value("message", std::string());
    r.confirm = j.value("confirm", false);
    r.threads = j.value("threads", 0);
    r.network = j.value("network", false);
    r.rule = j.value("rule", false);
    r.family = j.value("family", std::string());
    r.sizes = j.value("sizes", std::string());
    for (const auto &[k, v] : j.at("config").items())
      r.config[k] = v.get<int64_t>();
  } catch (const nlohmann::json::exception &e) {
    fail(e.what());
  }
  if (r.task.size() != 16 || r.task.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail("task '", r.task, "' is not 16 hex digits");
  if (r.status != "ok" && r.status != "wrong" && r.status != "timeout" && r.status != "error")
    fail("status '", r.status, "' is not ok, wrong, timeout or error");
  if (r.status == "ok" && !(r.ms > 0))
    fail("an ok record needs a positive ms");
  if (r.threads < 0)
    fail("threads must be positive, got ", r.threads);
  if (!r.family.empty() && r.sizes.empty())
    fail("a record of family ", r.family, " needs the sizes it was measured at");
  return r;
}

TuningLog TuningLog::read(const std::filesystem::path &file, std::vector<std::string> *warnings) {
  TuningLog log;
  log.file = file;
  std::ifstream in(file);
  if (!in) {
    std::error_code ec;
    if (std::filesystem::exists(file, ec))
      fail(file.string(), ": cannot read the tuning log");
    return log;
  }
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    try {
      TuningRecord r = recordFromJson(line);
      r.line = n;
      log.records.push_back(std::move(r));
    } catch (const Error &e) {
      if (warnings)
        warnings->push_back("warning: " + file.string() + ":" + std::to_string(n) +
                            ": skipped a damaged tuning record (" + e.what() + ")");
    }
  }
  return log;
}

void TuningLog::append(const std::filesystem::path &file,
                       const std::vector<TuningRecord> &records) {
  if (records.empty())
    return;
  std::error_code ec;
  if (file.has_parent_path())
    std::filesystem::create_directories(file.parent_path(), ec);
  std::string text;
  for (const TuningRecord &r : records)
    text += recordToJson(r) + "\n";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    fail(file.string(), ": cannot open the tuning log: ", std::strerror(errno));
  // One write of whole lines under an exclusive lock: another process appending at the same time
  // writes before or after, never inside a line.
  bool ok = ::flock(fd, LOCK_EX) == 0;
  size_t done = 0;
  while (ok && done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    ok = n > 0;
    done += n > 0 ? static_cast<size_t>(n) : 0;
  }
  int err = errno;
  ::flock(fd, LOCK_UN);
  ::close(fd);
  if (!ok)
    fail(file.string(), ": cannot write the tuning log: ", std::strerror(err));
}

namespace {

// Whether `r` is an "ok" record of the task and target measured at `threads` threads (0: any;
// a record that does not say matches any).
bool okRecordOf(const TuningRecord &r, const std::string &task, const std::string &target,
                int threads) {
  return r.status == "ok" && r.task == task && r.target == target &&
         (threads == 0 || r.threads == 0 || r.threads == threads);
}

// Whether best() and fastest() may choose `r`: a search's record (not a network check's), of the
// confirmation records only when `confirmed`.
bool eligible(const TuningRecord &r, const std::string &task, const std::string &target,
              bool confirmed, int threads) {
  return okRecordOf(r, task, target, threads) && !r.network && (r.confirm || !confirmed);
}

// The fastest of `records` that `keep` accepts, or null.
template <typename Keep>
const TuningRecord *fastestOf(const std::vector<TuningRecord> &records, Keep keep) {
  const TuningRecord *best = nullptr;
  for (const TuningRecord &r : records)
    if (keep(r) && (!best || r.ms < best->ms))
      best = &r;
  return best;
}

} // namespace

const TuningRecord *TuningLog::best(const std::string &task, const std::string &target,
                                    bool confirmed, int threads) const {
  return fastestOf(records, [&](const TuningRecord &r) {
    return eligible(r, task, target, confirmed, threads);
  });
}

const TuningRecord *TuningLog::fastest(const std::string &task, const std::string &target,
                                       const Config &config, bool confirmed, int threads) const {
  return fastestOf(records, [&](const TuningRecord &r) {
    return eligible(r, task, target, confirmed, threads) && r.config == config;
  });
}

const TuningRecord *TuningLog::inNetwork(const std::string &task, const std::string &target,
                                         const Config &config, int threads) const {
  return fastestOf(records, [&](const TuningRecord &r) {
    return r.network && okRecordOf(r, task, target, threads) && r.config == config;
  });
}

} // namespace loupe::backend
