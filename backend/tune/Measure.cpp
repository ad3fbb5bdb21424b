// Measure: candidates compiled and timed in worker processes (`--tune-worker`) that the pool
// spawns, feeds JSON lines and kills when a candidate outlives its time.
#include "backend/tune/Measure.h"

#include "backend/Codegen.h"
#include "backend/LowerFunction.h"
#include "backend/Runtime.h"
#include "backend/llvm/HostTarget.h"
#include "core/Buffers.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Op.h"
#include "core/Shape.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

extern char **environ;

namespace loupe::backend {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A block kernels read or write (kernelBuffer: 64-byte aligned, zeroed, padded).
struct Block {
  void *p = nullptr;
  size_t bytes = 0; ///< rounded up to whole cache lines
  explicit Block(int64_t size) {
    bytes = static_cast<size_t>((std::max<int64_t>(size, 1) + 63) / 64 * 64);
    p = kernelBuffer(bytes);
    if (!p)
      fail("measure: cannot allocate ", bytes, " bytes");
  }
  ~Block() { std::free(p); }
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;
};

// The bytes a kernel's weights must stream through before they are out of cache: twice the
// last-level cache the OS reports (index3, else the largest), 64 MiB when it reports none.
size_t coldBytes() {
  static const size_t bytes = [] {
    size_t largest = 0;
    for (int i = 0; i < 8; ++i) {
      std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
      std::string text;
      if (!(in >> text) || text.empty())
        continue;
      size_t n = std::strtoull(text.c_str(), nullptr, 10);
      char unit = text.back();
      n *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
      largest = std::max(largest, n);
    }
    return largest ? 2 * largest : size_t{64} << 20;
  }();
  return bytes;
}

Config configFrom(const nlohmann::json &j) {
  Config c;
  for (const auto &[k, v] : j.items())
    c[k] = v.get<int64_t>();
  return c;
}

nlohmann::json configJson(const Config &c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto &[k, v] : c)
    j[k] = v;
  return j;
}

} // namespace

double outputDifference(const std::vector<Tensor> &reference, const std::vector<Tensor> &got) {
  if (reference.size() != got.size())
    return INFINITY;
  double worst = 0, scale = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].data.size() != reference[k].data.size())
      return INFINITY;
    for (size_t i = 0; i < got[k].data.size(); ++i) {
      double ref = reference[k].data[i], v = got[k].data[i];
      scale = std::max(scale, std::fabs(ref));
      if (std::isnan(v) != std::isnan(ref))
        return INFINITY;
      if (!std::isnan(v))
        worst = std::max(worst, std::fabs(v - ref));
    }
  }
  return worst / std::max(scale, 1e-30);
}

// --- in this process -----------------------------------------------------------------------

struct CandidateRunner::Impl {
  FusedFunction function;
  std::vector<std::unique_ptr<Block>> inputs, outputs;
  std::vector<Tensor> reference;
  LoweredFunction lowered;
  std::unique_ptr<CompiledModule> code;

  void buildBuffers(const LoweredFunction &f) {
    std::mt19937 rng(20261125);
    std::uniform_real_distribution<double> u(-1, 1);
    for (const loop::ComputeRef &p : f.inputs) {
      Tensor t(p->shape, p->dtype);
      // Integers stay 0 or 1: valid indices for the gathers that read them.
      for (double &v : t.data)
        v = dtypeIsFloat(p->dtype) ? u(rng) : static_cast<double>(rng() % 2);
      inputs.push_back(std::make_unique<Block>(numElements(p->shape) * dtypeBytes(p->dtype)));
      copyToBuffer(t, p->dtype, inputs.back()->p);
    }
    for (const loop::ComputeRef &o : f.outputs)
      outputs.push_back(std::make_unique<Block>(numElements(o->shape) * dtypeBytes(o->dtype)));
  }

  std::vector<void *> args() const {
    std::vector<void *> a;
    for (const auto &b : inputs)
      a.push_back(b->p);
    for (const auto &b : outputs)
      a.push_back(b->p);
    return a;
  }

  // The inputs after the first (a layer's weights and biases, a residual) and the outputs as a
  // network meets them: its other layers ran since they were last touched, so they come from
  // memory. Copies of them rotate call by call, enough that the bytes between two uses of one
  // copy exceed the last-level cache; the first input (the previous layer's output) stays
  // warm. Back to back on one copy, a stage-4 convolution of resnet-18 kept its 9.4 MB of
  // weights in a Zen 3's L3 and a tuned point measured 1.11x the rule ran 1.8x slower than it
  // in the network; with one warm output, a point of resnet-50's layer4.0 3x3 convolution that
  // sums into its output measured 1.21x the rule on a Zen 5 (1.13 ms) and runs 1.36 ms with
  // the outputs rotated, 1.44 ms in the network. Made once: every candidate of the function
  // reads the same inputs.
  std::vector<std::vector<void *>> &coldArgSets() {
    if (!argSets.empty())
      return argSets;
    size_t rotated = 0;
    for (size_t k = 1; k < inputs.size(); ++k)
      rotated += inputs[k]->bytes;
    for (const auto &o : outputs)
      rotated += o->bytes;
    size_t copies =
        rotated ? std::clamp<size_t>((coldBytes() + rotated - 1) / rotated, 1, 64) : size_t{1};
    argSets.assign(copies, args());
    for (size_t c = 1; c < copies; ++c) {
      for (size_t k = 1; k < inputs.size(); ++k) {
        rotatedCopies.push_back(std::make_unique<Block>(static_cast<int64_t>(inputs[k]->bytes)));
        std::memcpy(rotatedCopies.back()->p, inputs[k]->p, inputs[k]->bytes);
        argSets[c][k] = rotatedCopies.back()->p;
      }
      for (size_t k = 0; k < outputs.size(); ++k) {
        rotatedCopies.push_back(std::make_unique<Block>(static_cast<int64_t>(outputs[k]->bytes)));
        argSets[c][inputs.size() + k] = rotatedCopies.back()->p;
      }
    }
    return argSets;
  }
  std::vector<std::unique_ptr<Block>> rotatedCopies;
  std::vector<std::vector<void *>> argSets;

  std::vector<Tensor> results() const {
    std::vector<Tensor> r;
    for (size_t k = 0; k < lowered.outputs.size(); ++k)
      r.push_back(
          copyFromBuffer(outputs[k]->p, lowered.outputs[k]->shape, lowered.outputs[k]->dtype));
    return r;
  }

  void compileAt(const Config *c) {
    TunedPoint point{c ? *c : Config{}, "candidate"};
    lowered = lowerFunction(function, c ? &point : nullptr);
    CompileOptions o;
    o.threads = 1;
    code.reset();
    code = CompiledModule::compile({lowered}, o);
  }
};

CandidateRunner::CandidateRunner(const FusedFunction &f) : impl_(std::make_unique<Impl>()) {
  impl_->function = f;
  impl_->compileAt(nullptr);
  impl_->buildBuffers(impl_->lowered);
  impl_->code->call(impl_->lowered.name, impl_->args());
  impl_->reference = impl_->results();
}

CandidateRunner::~CandidateRunner() = default;

void CandidateRunner::compile(const Config &c) { impl_->compileAt(&c); }

Measurement CandidateRunner::measure(const MeasureOptions &o) {
  Impl &m = *impl_;
  if (!m.code)
    fail("measure: nothing compiled");
  Measurement r;
  // Outputs poisoned with NaNs: a candidate that leaves any element unwritten cannot pass on
  // the previous candidate's values.
  for (size_t k = 0; k < m.outputs.size(); ++k)
    std::memset(m.outputs[k]->p, 0xff, m.outputs[k]->bytes);
  std::vector<void *> args = m.args();
  m.code->call(m.lowered.name, args);
  r.relError = outputDifference(m.reference, m.results());
  if (!(r.relError <= o.tolerance)) {
    r.status = "wrong";
    r.message = "its output differs from the rule's by " + std::to_string(r.relError) +
                " of the largest magnitude";
    return r;
  }
  void (*fn)(void **) = m.code->packed(m.lowered.name);
  std::vector<std::vector<void *>> &argSets = m.coldArgSets();
  const size_t copies = argSets.size();
  double best = INFINITY;
  // One repeat untimed first: the thread pool wakes, the caches and the clock warm up, so that
  // the first candidate a worker measures (often the rule) is not measured cold.
  // Calls back to back, as a network runs its kernels (with the pool's threads spinning between
  // them). Flushing each call's weights with clflush (AutoTVM's cache flush) was tried: on a
  // Zen 3 VM it spread one kernel's times over 1.57-2.68 ms against 1.48-1.68 ms back to back.
  for (int rep = -1; rep < std::max(1, o.repeats); ++rep) {
    int64_t calls = 0;
    Clock::time_point t0 = Clock::now();
    double elapsed = 0;
    do {
      fn(argSets[static_cast<size_t>(calls) % copies].data());
      ++calls;
      elapsed = msSince(t0);
    } while (elapsed < o.minRepeatMs);
    if (rep >= 0)
      best = std::min(best, elapsed / static_cast<double>(calls));
  }
  r.ms = best;
  return r;
}

// --- the worker process ----------------------------------------------------------------------

int tuneWorkerMain() {
  // Ctrl-C at the terminal reaches the whole process group: the parent stops its workers.
  std::signal(SIGINT, SIG_IGN);
  // A fresh process: the ops a task's body names, and the target sizing its schedules read.
  registerAllOps();
  installTargetInfo();
  // Tasks are opt_level 3 kernels, which the network runs with subnormals flushed (the
  // default; a build with `:set denormals keep` is measured so too, on inputs that have none).
  KernelFloatMode flush(true);
  std::unique_ptr<CandidateRunner> runner;
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json reply;
    try {
      nlohmann::json req = nlohmann::json::parse(line);
      std::string op = req.at("op").get<std::string>();
      if (op == "task") {
        runner.reset();
        runner = std::make_unique<CandidateRunner>(
            functionFromJson(req.at("function").get<std::string>(), "tune task"));
        reply = {{"ok", true}};
      } else if (op == "compile") {
        if (!runner)
          fail("no task");
        Clock::time_point t0 = Clock::now();
        runner->compile(configFrom(req.at("config")));
        reply = {{"ok", true}, {"compile_ms", msSince(t0)}};
      } else if (op == "measure") {
        if (!runner)
          fail("no task");
        MeasureOptions o;
        o.minRepeatMs = req.value("min_repeat_ms", o.minRepeatMs);
        o.repeats = req.value("repeats", o.repeats);
        o.tolerance = req.value("tolerance", o.tolerance);
        Measurement m = runner->measure(o);
        reply = {{"ok", true},
                 {"status", m.status},
                 {"ms", m.ms},
                 {"rel_error", m.relError},
                 {"message", m.message}};
      } else {
        fail("unknown request '", op, "'");
      }
    } catch (const std::exception &e) {
      reply = {{"ok", false}, {"error", e.what()}};
    }
    std::cout << reply.dump() << "\n" << std::flush;
  }
  return 0;
}

// --- the pool of workers ---------------------------------------------------------------------

struct MeasurePool::Worker {
  pid_t pid = -1;
  int toWorker = -1, fromWorker = -1;
  std::string buffered; ///< read past the last full line
  std::string task;     ///< the task key it holds, "" when none

  ~Worker() { stop(); }

  void start() {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      fail("tune: cannot make pipes for a worker: ", std::strerror(errno));
    const char *env = std::getenv("LOUPE_TUNE_WORKER");
    std::string exe = env && *env ? env : "/proc/self/exe";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    const char *argv[] = {exe.c_str(), "--tune-worker", nullptr};
    int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, const_cast<char **>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
      ::close(in[1]);
      ::close(out[0]);
      pid = -1;
      fail("tune: cannot start the worker ", exe, ": ", std::strerror(rc));
    }
    toWorker = in[1];
    fromWorker = out[0];
    buffered.clear();
    task.clear();
  }

  void stop() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (toWorker >= 0)
      ::close(toWorker);
    if (fromWorker >= 0)
      ::close(fromWorker);
    pid = -1;
    toWorker = fromWorker = -1;
    task.clear();
  }

  void send(const nlohmann::json &req) {
    std::string text = req.dump() + "\n";
    for (size_t done = 0; done < text.size();) {
      ssize_t n = ::write(toWorker, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        fail("the worker stopped");
      done += static_cast<size_t>(n);
    }
  }

  // The next answer, or nullopt when `deadline` passes first. Throws Error when the worker
  // died, Interrupted on Ctrl-C.
  std::optional<nlohmann::json> receive(Clock::time_point deadline) {
    for (;;) {
      if (size_t nl = buffered.find('\n'); nl != std::string::npos) {
        std::string line = buffered.substr(0, nl);
        buffered.erase(0, nl + 1);
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded())
          fail("the worker answered '", line, "'");
        return j;
      }
      checkInterrupt();
      double left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
      if (left <= 0)
        return std::nullopt;
      pollfd p{fromWorker, POLLIN, 0};
      // Short slices, so that Ctrl-C is seen within a tenth of a second.
      int r = ::poll(&p, 1, static_cast<int>(std::min(left, 100.0)) + 1);
      if (r < 0 && errno != EINTR)
        fail("tune: poll: ", std::strerror(errno));
      if (r <= 0)
        continue;
      char buf[4096];
      ssize_t n = ::read(fromWorker, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        fail("the worker stopped (crashed or was killed)");
      buffered.append(buf, static_cast<size_t>(n));
    }
  }

  // A request and its answer within `seconds`; nullopt after killing the worker when it takes
  // longer.
  std::optional<nlohmann::json> ask(const nlohmann::json &req, double seconds) {
    send(req);
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(seconds));
    std::optional<nlohmann::json> a = receive(deadline);
    if (!a)
      stop();
    return a;
  }
};

MeasurePool::MeasurePool(int workers, MeasureOptions options) : options_(options) {
  for (int i = 0; i < std::max(1, workers); ++i)
    workers_.push_back(std::make_unique<Worker>());
}

MeasurePool::~MeasurePool() = default;

namespace {

// Whether a worker's answer reports success; otherwise `m` says why: `late` when none came in
// time, the worker's error (or `failedTo`) when it came back not ok.
bool accepted(const std::optional<nlohmann::json> &a, Measurement &m, const char *late,
              const char *failedTo) {
  if (!a) {
    m.status = "timeout";
    m.message = late;
    return false;
  }
  if (!a->value("ok", false)) {
    m.status = "error";
    m.message = a->value("error", std::string(failedTo));
    return false;
  }
  return true;
}

} // namespace

std::vector<Measurement> MeasurePool::measure(const Task &task,
                                              const std::vector<Config> &configs) {
  std::vector<Measurement> results(configs.size());
  // One step of one candidate with its worker: a worker that fails (dies, answers garbage) is
  // stopped and the candidate reported as an error. Whether the step succeeded.
  auto guarded = [](Worker &wk, Measurement &m, const auto &step) {
    try {
      return step();
    } catch (const Interrupted &) {
      throw;
    } catch (const Error &e) {
      wk.stop();
      m.status = "error";
      m.message = e.what();
      return false;
    }
  };
  try {
    for (size_t first = 0; first < configs.size(); first += workers_.size()) {
      size_t n = std::min(workers_.size(), configs.size() - first);
      std::vector<bool> compiled(n, false);
      // Each worker loads the task (once) and compiles its candidate; the compiles overlap.
      for (size_t w = 0; w < n; ++w) {
        Worker &wk = *workers_[w];
        Measurement &m = results[first + w];
        compiled[w] = guarded(wk, m, [&] {
          if (wk.pid < 0)
            wk.start();
          if (wk.task != task.key) {
            if (!accepted(wk.ask({{"op", "task"}, {"function", functionToJson(*task.function)}},
                                 options_.timeoutSeconds * 4),
                          m, "the task's rule did not compile in time", "the task did not load"))
              return false;
            wk.task = task.key;
          }
          wk.send({{"op", "compile"}, {"config", configJson(configs[first + w])}});
          return true;
        });
      }
      auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(options_.timeoutSeconds));
      for (size_t w = 0; w < n; ++w) {
        if (!compiled[w])
          continue;
        Worker &wk = *workers_[w];
        Measurement &m = results[first + w];
        compiled[w] = guarded(wk, m, [&] {
          std::optional<nlohmann::json> a = wk.receive(deadline);
          if (!a)
            wk.stop(); // still compiling: abandoned
          if (!accepted(a, m, "it did not compile within the time limit", "it did not compile"))
            return false;
          m.compileMs = a->value("compile_ms", 0.0);
          return true;
        });
      }
      // Timed one at a time: nothing else of the tuner runs meanwhile.
      for (size_t w = 0; w < n; ++w) {
        if (!compiled[w])
          continue;
        Worker &wk = *workers_[w];
        Measurement &m = results[first + w];
        guarded(wk, m, [&] {
          std::optional<nlohmann::json> a = wk.ask({{"op", "measure"},
                                                    {"min_repeat_ms", options_.minRepeatMs},
                                                    {"repeats", options_.repeats},
                                                    {"tolerance", options_.tolerance}},
                                                   options_.timeoutSeconds);
          if (!accepted(a, m, "it did not finish its runs within the time limit", "it did not run"))
            return false;
          m.status = a->value("status", std::string("error"));
          m.ms = a->value("ms", 0.0);
          m.relError = a->value("rel_error", 0.0);
          m.message = a->value("message", std::string());
          return true;
        });
      }
    }
  } catch (const Interrupted &) {
    for (auto &w : workers_)
      w->stop();
    throw;
  }
  return results;
}

} // namespace loupe::backend
