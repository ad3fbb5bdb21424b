// SerialSmall: small kernels' parallel loops made serial, counted by the element statements
// they execute.
#include "backend/loop/SerialSmall.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace loupe::loop {

namespace {

// Element statements a statement executes (every loop's extent times its body's), saturating;
// a loop of unknown extent counts as large.
int64_t work(const Stmt &s) {
  constexpr int64_t kLarge = int64_t{1} << 40;
  if (!s)
    return 0;
  switch (s->kind) {
  case StmtKind::Store:
    return 1;
  case StmtKind::For: {
    int64_t extent = 0;
    if (!constValue(s->b, &extent))
      return kLarge;
    return std::min(kLarge, extent * std::min(kLarge, work(s->body[0])));
  }
  default: {
    int64_t sum = 0;
    for (const Stmt &b : s->body)
      sum = std::min(kLarge, sum + work(b));
    return sum;
  }
  }
}

Stmt serialiseParallel(const Stmt &s) {
  if (!s)
    return s;
  std::vector<Stmt> body;
  bool changed = s->kind == StmtKind::For && s->forKind == ForKind::Parallel;
  for (const Stmt &b : s->body) {
    body.push_back(serialiseParallel(b));
    changed |= body.back() != b;
  }
  if (!changed)
    return s;
  auto out = std::make_shared<StmtNode>(*s);
  out->body = std::move(body);
  if (out->kind == StmtKind::For && out->forKind == ForKind::Parallel)
    out->forKind = ForKind::Serial;
  return out;
}

} // namespace

Stmt runSmallOnCaller(const Stmt &body) {
  // Below this many element statements a kernel takes a few microseconds on one core, and a
  // second core costs more than it saves: waking it, and moving the kernel's data into its
  // cache (a 13x13x3x3 weight transform took 10 us on two threads, 0.8 us on one).
  constexpr int64_t kSmall = 8192;
  return work(body) < kSmall ? serialiseParallel(body) : body;
}

} // namespace loupe::loop
