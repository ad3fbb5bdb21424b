// LoopIR: the loop-level IR fused functions lower to — a closed set of expression and statement
// kinds, listed here and nowhere else (TVM's Halide IR, cut to what the schedules need).
//
// Nodes are immutable and shared. Variables are compared by identity (the same node), never by
// name, so two loops may both be called `i` without confusion. Before lowering, expressions may
// read tensors of the compute graph (TensorRead) and hold reductions (Reduce); after lowering
// only flat buffer loads and stores remain.
#pragma once

#include "core/Shape.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace loupe::loop {

/// Scalar types: the NNVM dtype codes (float32 = 0, float64 = 1, int32 = 4, …) plus bool.
inline constexpr int kBool = 100;

/// Every expression kind.
enum class ExprKind {
  IntImm,     ///< integer constant (int32 unless dtype says otherwise)
  FloatImm,   ///< floating-point constant
  Var,        ///< a loop or let variable
  Binary,     ///< arithmetic, comparison or logic on two operands (BinOp)
  Not,        ///< logical not
  Select,     ///< cond ? a : b, both evaluated
  Cast,       ///< conversion to dtype
  Call,       ///< an intrinsic: exp, log, sqrt, tanh, fabs, pow, floor, ceil, likely,
              ///< tvm_if_then_else (lazy select)
  Load,       ///< buffer[index] on a flattened buffer
  TensorRead, ///< tensor(i, j, …) on a compute-graph tensor (before lowering)
  Reduce,     ///< a commutative reduction over reduce axes (before lowering)
};

/// Binary operators. Shl and Shr shift an unsigned integer's bits (logically; a shift by the
/// type's width or more gives 0).
/// (The comparisons and logic, EQ onwards, give bools.)
enum class BinOp { Add, Sub, Mul, Div, Mod, Min, Max, Shl, Shr, EQ, NE, LT, LE, GT, GE, And, Or };

/// The combiners a Reduce may use.
enum class Combiner { Sum, Max, Min, Prod };

struct ExprNode;
/// An expression (never null once built).
using Expr = std::shared_ptr<const ExprNode>;

struct Compute;
/// A tensor of the compute graph: a placeholder or a computed stage.
using ComputeRef = std::shared_ptr<const Compute>;

/// A reduction axis: its variable and extent (the range is [0, extent)). Over a symbolic
/// dimension (attention's sum over `seq`) the extent is 0 and `size` its expression of the
/// size symbols.
struct IterVar {
  Expr var;
  int64_t extent = 0;
  Expr size; ///< the symbolic extent; null for a constant one
};

struct ExprNode {
  explicit ExprNode(ExprKind k) : kind(k) {}
  ExprKind kind;
  int dtype = 0;
  int64_t intValue = 0;   ///< IntImm
  double floatValue = 0;  ///< FloatImm
  std::string name;       ///< Var name, Call intrinsic, Load buffer
  BinOp op = BinOp::Add;  ///< Binary
  std::vector<Expr> args; ///< operands, call arguments, load index, tensor indices
  ComputeRef tensor;      ///< TensorRead
  Combiner combiner = Combiner::Sum;
  std::vector<IterVar> reduceAxes; ///< Reduce; args[0] is the source, args[1] a condition
};

// Builders. Integer arithmetic folds constants and drops identities (x + 0, x * 1, x * 0), as
// TVM's simplifier did before printing; nothing else is rewritten.
Expr intImm(int64_t v, int dtype = 4);
Expr floatImm(double v, int dtype);
Expr boolImm(bool v);
Expr var(const std::string &name, int dtype = 4);
Expr binary(BinOp op, Expr a, Expr b);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator+(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator/(Expr a, int64_t b);
Expr operator%(Expr a, int64_t b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr land(Expr a, Expr b);
Expr lor(Expr a, Expr b);
Expr lnot(Expr a);
Expr select(Expr cond, Expr a, Expr b);
Expr cast(int dtype, Expr a);
Expr call(const std::string &intrinsic, std::vector<Expr> args, int dtype);

/// The one-argument math functions a call may name besides the intrinsics the backends know
/// (erf, sin, atanh, …): codegen calls libm's function of that name, and libmValue computes it.
bool isLibmFunction(const std::string &name);

/// libm's function `name` (one of isLibmFunction's) at x.
double libmValue(const std::string &name, double x);
Expr load(const std::string &buffer, int dtype, Expr index);
Expr tensorRead(const ComputeRef &t, std::vector<Expr> indices);
Expr reduce(Combiner c, Expr source, std::vector<IterVar> axes, Expr cond = nullptr);

/// True for IntImm with value v.
bool isConst(const Expr &e, int64_t v);
/// The value of an IntImm, or nullopt-like false.
bool constValue(const Expr &e, int64_t *v);

/// Whether `e` reads the variable `v` (by identity), or any variable of `vars`.
bool usesVar(const Expr &e, const ExprNode *v);
bool usesAnyVar(const Expr &e, const std::set<const ExprNode *> &vars);

/// The coefficient of `v` in an integer index that is affine in it (other variables and
/// non-affine parts not reading `v` count as constants), or nullopt when `v` appears otherwise.
std::optional<int64_t> linearCoef(const Expr &e, const ExprNode *v);

/// An integer index as (its terms without the constant ones, null when there are none; the sum
/// of its constant terms), through +, - and * by constants: the parts canonicalIndex joins.
std::pair<Expr, int64_t> splitConstant(const Expr &e);

/// An integer index with its constant terms collected at the end, as TVM's simplifier printed
/// it: ((a + 1)*13 + (b + 2)) becomes ((a*13) + b) + 15.
Expr canonicalIndex(const Expr &e);

/// Replaces variables (by identity) with expressions, rebuilding only what changes.
Expr substitute(const Expr &e, const std::vector<std::pair<const ExprNode *, Expr>> &map);

/// Whether two expressions are the same tree (variables by identity).
bool sameExpr(const Expr &a, const Expr &b);

/// Appends every conjunct of a condition to `out` (`a && (b && likely(c))` gives a, b, c).
void conjuncts(const Expr &c, std::vector<Expr> *out);

/// An integer index with the divisions and remainders of re-flattened coordinates folded back:
/// (x / a) / b = x / (a*b), (x / (a*b))*b + (x / a) % b = x / a and (x / a)*a + x % a = x for
/// positive constants (exact for truncating division). A reshape of a blocked tensor reads
/// x itself, consecutively, instead of a gather. Used by code generation only: printed loops
/// keep TVM's form.
Expr foldDivMod(const Expr &e);

/// The value of `a` Shl (`left`) or Shr `b` on integers held in doubles, as the interpreters
/// compute it: in 64-bit unsigned arithmetic (the element's own width is what its dtype's
/// rounding wraps to), 0 for a shift by 64 or more.
double shiftBits(double a, double b, bool left);

// ---------------------------------------------------------------------------------------------

/// Every statement kind.
enum class StmtKind {
  For,        ///< for (var, min, extent) with a ForKind
  Store,      ///< buffer[index] = value
  Allocate,   ///< a buffer of dtype and extents for the body
  Attr,       ///< `// attr [node] key = value` over the body (storage_scope)
  Produce,    ///< `produce name { body }`
  IfThenElse, ///< if (cond) { then } [else { else }]
  Seq,        ///< statements in order
  LetStmt,    ///< let var = value in body
};

/// How a loop runs. Scalarized is a vectorized loop whose body the schedule guarded by the lane
/// (TVM's `.s` loops, printed as `for`): the backend may still run it as one masked vector
/// step.
enum class ForKind { Serial, Parallel, Vectorized, Unrolled, Scalarized };

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  StmtKind kind;
  Expr var;  ///< For, LetStmt
  Expr a, b; ///< For: min, extent; Store: index, value; If: cond; Let: value;
             ///< Allocate: its element count when symbolic (null: the extents' product)
  ForKind forKind = ForKind::Serial;
  std::string name;             ///< Store/Allocate buffer, Produce/Attr node name
  int dtype = 0;                ///< Allocate
  std::vector<int64_t> extents; ///< Allocate
  std::string key, value;       ///< Attr
  std::vector<Stmt> body;       ///< For/Allocate/Attr/Produce/Let: [body]; If: [then, else?];
                                ///< Seq: the statements
};

Stmt forLoop(Expr v, Expr min, Expr extent, ForKind kind, Stmt body);
Stmt store(const std::string &buffer, Expr index, Expr value);
Stmt allocate(const std::string &buffer, int dtype, std::vector<int64_t> extents, Stmt body);
/// A buffer of `count` elements, an expression of the size symbols (a generic kernel's
/// intermediate), allocated when the statement runs; `extents` are its dimensions' sizes (0 for a
/// symbolic one), for printing.
Stmt allocateSized(const std::string &buffer, int dtype, Expr count, Stmt body);
Stmt attr(const std::string &node, const std::string &key, const std::string &value, Stmt body);
Stmt produce(const std::string &name, Stmt body);
Stmt ifThenElse(Expr cond, Stmt then, Stmt otherwise = nullptr);
/// A sequence; nested sequences are flattened and a single statement is returned as is.
Stmt seq(std::vector<Stmt> stmts);
Stmt letStmt(Expr v, Expr value, Stmt body);

/// Replaces variables in every expression of a statement.
Stmt substitute(const Stmt &s, const std::vector<std::pair<const ExprNode *, Expr>> &map);

/// Prints an expression or statement as TVM printed lowered functions in the seeds (nested
/// parentheses, `parallel (i0.i1.fused, 0, 21) {`, `0.000000f`, `+ -20`).
/// With `lines`, also records the 1-based line each statement starts on (a sequence: its first
/// statement's), so that tools can point at a statement of the printed listing.
using StmtLines = std::unordered_map<const StmtNode *, int>;
std::string printExpr(const Expr &e);
std::string printStmt(const Stmt &s, StmtLines *lines = nullptr);

} // namespace loupe::loop
