// Schedule: how each stage of a fused function becomes loops — TVM's schedule primitives
// (split, fuse, reorder, parallel, vectorize, unroll, compute_inline) over the loop IR, and the
// lowering of a scheduled compute graph to one statement.
#pragma once

#include "backend/schedule/Space.h"
#include "core/Target.h"
#include "core/loop/Compute.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// One loop of a stage's nest (outermost first): its variable, extent and kind, and whether it
/// runs over a reduction axis. A loop over a symbolic dimension (a generic kernel's `batch*seq`
/// rows) has extent 0 — unknown to a schedule that reads sizes, as a symbolic Shape's size is —
/// and its extent as an expression of the size symbols in `size`.
struct Leaf {
  Leaf() = default;
  Leaf(loop::Expr v, int64_t e, loop::ForKind k = loop::ForKind::Serial, bool r = false,
       loop::Expr s = nullptr)
      : var(std::move(v)), extent(e), kind(k), reduce(r), size(std::move(s)) {}
  loop::Expr var;
  int64_t extent = 0;
  loop::ForKind kind = loop::ForKind::Serial;
  bool reduce = false;
  loop::Expr size; ///< the symbolic extent; null for a constant one
};

/// A leaf's extent as an expression (its size, or its constant).
loop::Expr leafExtent(const Leaf &l);

/// A stage of the compute graph and the loops chosen for it.
struct Stage {
  loop::ComputeRef tensor;
  /// What it computes at its axes: the tensor's body, or after cache_write a read of the cache.
  loop::Expr body;
  std::string buffer; ///< the buffer it writes (its name, made unique in the function)
  bool inlined = false;
  /// compute_at: the consumer loop (a leaf variable of another stage) it runs under, once per
  /// iteration, over the region that iteration reads; null for its own loop nest.
  loop::Expr attachedAt;
  std::vector<Leaf> leaves;
  /// Each original axis (data-parallel and reduce) as an expression of the leaf variables.
  std::vector<std::pair<const loop::ExprNode *, loop::Expr>> axisValue;
  /// Conditions a split that does not divide its axis adds: `value < extent`.
  std::vector<loop::Expr> guards;
  /// TVM's "local" scope, for a stage computed at a consumer's loop: its buffer holds just the
  /// region one iteration of that loop reads (`region` elements per axis, starting at
  /// `regionMin`, an expression of the consumer's outer loops) and is allocated inside the loop,
  /// so a small one (a register tile's accumulator) can live in registers.
  bool local = false;
  std::vector<loop::Expr> regionMin;
  Shape region;
  /// A reduction's updates run only where these hold (Schedule::skipUpdatesOutside): each is
  /// an expression of the stage's original axes, tested once around the loops inside the
  /// innermost leaf it reads.
  std::vector<loop::Expr> updateWithin;
};

/// The schedule of one function: a stage per computed tensor (producers first) and the steps
/// applied, which `describe` prints (a schedule is data the user can read).
class Schedule {
public:
  /// Stages for everything `outputs` need; inputs are the function's placeholders.
  explicit Schedule(const std::vector<loop::ComputeRef> &outputs);

  std::vector<Stage> stages;
  std::vector<loop::ComputeRef> outputs;
  /// The target's CPU, which opt level 3's schedules size vectors and register tiles by.
  TargetCpu cpu;
  /// The point of the space this schedule is made at — a tuning candidate, or the best record
  /// `:build` applies; null: every knob at its rule's value.
  std::shared_ptr<const Config> config;
  /// Where `config` comes from ("record 12 of FILE: …"), printed first by describe().
  std::string configSource;
  /// The knobs the schedule declared while scheduling: the function's search space.
  ConfigSpace space;

  /// The stage computing `t`; throws Error if there is none.
  Stage &stage(const loop::ComputeRef &t);
  /// The leaf variable named `name` in a stage; throws Error if there is none.
  loop::Expr leaf(Stage &s, const std::string &name) const;

  /// Splits a leaf into `<name>.outer` and `<name>.inner` (extent `factor`); a factor that does
  /// not divide adds a guard. Returns {outer, inner}.
  std::pair<loop::Expr, loop::Expr> split(Stage &s, loop::Expr v, int64_t factor);
  /// Splits a leaf of extent E ≥ factor into `<name>.outer` (ceil(E / factor)) and `<name>.inner`
  /// (factor) with the last tile shifted back to end at E: value = min(outer * factor, E -
  /// factor) + inner. No guard; the last tile recomputes a few elements of the one before it,
  /// which is harmless when the stage's output is not one of its inputs. Returns {outer, inner}.
  std::pair<loop::Expr, loop::Expr> splitShifted(Stage &s, loop::Expr v, int64_t factor);
  /// Tiles of `factor`: split when it divides the leaf's extent, else splitShifted.
  std::pair<loop::Expr, loop::Expr> splitTiles(Stage &s, loop::Expr v, int64_t factor);
  /// Fuses two adjacent leaves into `<a>.<b>.fused`.
  loop::Expr fuse(Stage &s, loop::Expr a, loop::Expr b);
  /// Puts the given leaves in this order, in the positions they occupy now.
  void reorder(Stage &s, const std::vector<loop::Expr> &order);
  // Leaves are taken by value: a caller's reference into `s.leaves` would change under us.
  void parallel(Stage &s, loop::Expr v);
  void vectorize(Stage &s, loop::Expr v);
  void unroll(Stage &s, loop::Expr v);
  /// Computes the stage where it is used instead of in its own loops.
  void computeInline(Stage &s);
  /// TVM's cache_write: a new stage `<name>.global` computes what `s` computed, and `s` becomes
  /// a copy of it. `s` must not be scheduled yet. Returns the new stage (references into
  /// `stages` taken before are invalid afterwards).
  Stage &cacheWrite(Stage &s);
  /// cache_write with the cache's data axis `axis` rounded up to a multiple of `multiple`: the
  /// extra elements are computed from the axis's last index (its reads clamped), so that tiles of
  /// `multiple` divide the cache without bounds tests; the copy reads the real ones only.
  Stage &cacheWritePadded(Stage &s, size_t axis, int64_t multiple);
  /// TVM's rfactor: the reduction over axis `k` (a reduce variable of `s`'s body, not yet
  /// scheduled) is split into `factor` partial sums computed by a new stage `<name>.rf` with one
  /// more data axis (`<k>.inner`, extent `factor`) that sums over `<k>.outer`; `s` then sums the
  /// partials. The partials' axis can be vectorised where `k` could not. Returns the new stage
  /// (references into `stages` taken before are invalid afterwards).
  Stage &rfactor(Stage &s, const loop::Expr &k, int64_t factor);
  /// Runs `producer` inside `consumer`'s loop `at`, for each iteration over just the region of
  /// its data axes that the iteration reads: bounds from the reads of the consumer and of the
  /// stages already computed inside `at` (a chain of producers is attached consumers first),
  /// which must be affine in their loop variables; no other stage may read `producer`. Schedule
  /// the consumer's loops first; `producer`'s data axes must not be split or fused yet (its
  /// reduce axes may be, before or after).
  void computeAt(Stage &producer, Stage &consumer, loop::Expr at);
  /// Makes a stage computed at a consumer's loop local to that loop (see Stage::local).
  void setLocal(Stage &s);
  /// Runs a reduction's update only where `cond` (an expression of the stage's original axes,
  /// data-parallel and reduce) holds, tested around the loops inside the innermost leaf it
  /// reads; that leaf must not be vectorised. Sound only where the update's source is the
  /// combiner's identity outside `cond` (a convolution's taps over zero padding): the caller
  /// vouches for it. `why` is printed with the step.
  void skipUpdatesOutside(Stage &s, loop::Expr cond, const std::string &why);
  /// Declares the knob `name` with its `candidates` and the rule's value `rule` (added to the
  /// candidates if missing), and returns the value to schedule with: the config's, when it gives
  /// this knob one of its candidates, else the rule's. A name declared twice is an error.
  int64_t define(const std::string &name, std::vector<int64_t> candidates, int64_t rule,
                 const std::string &doc);
  /// Limits the space: the product of `knobs`' values at most `cap` (ConfigSpace::limits).
  void limit(std::vector<std::string> knobs, int64_t cap);
  /// Records a knob and the value chosen for it, printed first by `describe`.
  void knob(const std::string &name, int64_t value, const std::string &why);

  /// Whether `st` computes one of the function's outputs.
  bool isOutput(const Stage &st) const;

  /// The steps applied so far, one per line ("compute: split xx by 16").
  std::string describe() const;

private:
  Leaf &findLeaf(Stage &s, const loop::Expr &v, size_t *pos);
  std::vector<std::string> log_;
  std::vector<std::string> knobs_;
};

/// Lowers a scheduled function to one statement: intermediate stages allocated (`// attr
/// [name] storage_scope = "global"` + `allocate`), one `produce` per materialised stage,
/// inlined stages substituted into their readers, reductions with an init nest, extent-1 loops
/// removed, unrolled loops expanded, guarded vector loops scalarised (`.s`). Placeholders are
/// read as flat buffers under their names.
loop::Stmt lower(const Schedule &s);

/// Floating-point operations one run of the scheduled function performs: per materialised
/// stage, the arithmetic and math calls of its body (inlined producers included) times its
/// elements and reduction extents. Index arithmetic and padding selects are not counted.
int64_t countFlops(const Schedule &s, const SymBindings &sizes = {});

/// The integer operations among countFlops' (8-bit products and their sums): a kernel made of
/// them is measured against the int8 peak.
int64_t countIntegerOps(const Schedule &s, const SymBindings &sizes = {});

/// The most terms one value of the function sums: the largest product of a reduction's axis
/// extents over its stages, 1 when it has none (`:bisect` weighs float rounding by it).
int64_t longestReduction(const Schedule &s);

/// countFlops split by the graph node each operation belongs to (Compute::node; an inlined
/// producer's operations count for its own node).
std::map<std::string, int64_t> countFlopsByNode(const Schedule &s, const SymBindings &sizes = {});

/// Provenance: for each buffer a materialised stage writes, the nodes its stores compute — the
/// stage's own and those of the stages inlined into it (Compute::node) — in `order`.
std::map<std::string, std::vector<std::string>>
nodesByBuffer(const Schedule &s, const std::vector<std::string> &order);

/// Row-major flat index of `indices` in a buffer of `shape`, in the form TVM's simplifier
/// printed: nested `((a*7) + b)`, constants collected at the end, a fused variable's `v/c` and
/// `v%c` recombined into `v`.
loop::Expr flatIndex(const std::vector<loop::Expr> &indices, const Shape &shape);

} // namespace loupe::backend
