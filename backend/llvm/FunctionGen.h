// FunctionGen: the visitor FunctionCodegen.cpp (statements, loops, parallel outlining) and
// ExprCodegen.cpp (expressions, loads, conversions) share — one lowered function's loop IR as
// LLVM IR, split the way Clang splits CodeGenFunction over CGStmt and CGExpr.
#pragma once

#include "backend/LowerFunction.h"
#include "backend/loop/TransposedTiles.h"

#include "core/DType.h"
#include "core/loop/Visitor.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

// The code generator's own namespace: it reads the loop IR's names unqualified, as the one file
// it was did, without bringing them into loupe::backend for every includer.
namespace loupe::backend::codegen {
using namespace loupe::loop;

/// Whether `dtype` computes as a floating-point value (bool is stored as a float type but is not).
inline bool isFloat(int dtype) { return dtype != kBool && dtypeIsFloat(dtype); }

/// Generates one lowered function (generateFunction's worker): `run` emits the function, its
/// packed wrapper and its outlined parallel bodies into the module.
class FunctionGen {
public:
  /// Generates `f` into `m` as the function `symbol` (with `symbol_packed` and
  /// `symbol_parallel<k>`).
  FunctionGen(llvm::Module &m, const LoweredFunction &f, std::string symbol,
              const StmtLines *lines);

  void run();

private:
  // With a listing's lines: `fn` gets a subprogram of its own, and the builder's location
  // becomes the current line in it (line 0, "no statement", until a statement sets one).
  void describe(llvm::Function *fn);

  void setLine(int line) {
    line_ = line;
    if (sp_)
      b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, static_cast<unsigned>(line), 0, sp_));
  }

  // The listing line of a statement for as long as it is emitted: what a loop adds after its
  // body (the increment, the branch back) is the loop's again.
  struct LineScope {
    FunctionGen &g;
    int saved;
    LineScope(FunctionGen &gen, const StmtNode *s) : g(gen), saved(gen.line_) {
      if (!g.lines_ || s->kind == StmtKind::Seq)
        return;
      if (auto it = g.lines_->find(s); it != g.lines_->end())
        g.setLine(it->second);
    }
    ~LineScope() {
      if (g.lines_)
        g.setLine(saved);
    }
    LineScope(const LineScope &) = delete;
    LineScope &operator=(const LineScope &) = delete;
  };

  // Whether every buffer of the function (arguments and allocations) has fewer than 2^30
  // elements, so that its index arithmetic can run in 32 bits (narrowIndex).
  bool fitsIn32Bits() const;

  struct BufferRef {
    llvm::Value *ptr;
    int dtype;
  };

  // Full-width vectors: without these LLVM splits 512-bit vectors on CPUs whose tuning
  // prefers 256 bits (as clang does for functions without 512-bit intrinsics).
  static void vectorWidthAttrs(llvm::Function *f) {
    f->addFnAttr("prefer-vector-width", "512");
    f->addFnAttr("min-legal-vector-width", "512");
  }

  llvm::Type *elemType(int dtype);

  // The type expressions of a dtype compute in: floats as themselves (bfloat16 as the float32
  // it exactly is), integers as i64.
  llvm::Type *valueType(int dtype);

  // bfloat16 in registers is a float32 holding a bfloat16 value: roundBF16 rounds a float32 to
  // one (to nearest even, NaN kept quiet: DType's bfloat16Bits), widenBF16 makes the float32 of
  // loaded bits and narrowBF16 the bits of a rounded value (any lanes).
  llvm::Value *roundBF16(llvm::Value *v);
  llvm::Value *widenBF16(llvm::Value *bits);
  llvm::Value *narrowBF16(llvm::Value *v);

  // A value of `t`'s element type with the lanes of `like` (scalar when `like` is scalar).
  static llvm::Type *withLanes(llvm::Type *t, llvm::Value *like) {
    if (auto *vt = llvm::dyn_cast<llvm::VectorType>(like->getType()))
      return llvm::VectorType::get(t, vt->getElementCount());
    return t;
  }

  // `v` broadcast to `lanes` lanes (unchanged if it is a vector already or lanes is 0).
  llvm::Value *splat(llvm::Value *v, unsigned lanes);

  static unsigned lanesOf(llvm::Value *v) {
    if (auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
      return vt->getNumElements();
    return 0;
  }

  // Makes two operands agree: a scalar next to a vector is broadcast.
  void matchLanes(llvm::Value *&a, llvm::Value *&b);

  llvm::Value *convert(llvm::Value *v, int from, int to);

  BufferRef buffer(const std::string &name);

  llvm::Value *address(const BufferRef &buf, const Expr &index);

  llvm::Value *intrinsic(llvm::Intrinsic::ID id, llvm::Value *x);

  // A libm call; on a vector, one call per lane.
  llvm::Value *libm(const char *base, llvm::Value *x);

  llvm::Value *call(const ExprNode &e);

  // q_multiply_shift: requantization's fixed-point multiply in 64-bit lanes.
  llvm::Value *multiplyShift(const ExprNode &e);

  // dot4(a0..a3, b0..b3) plus `acc` (null: 0): one vpdpbusd where the operands are a uint8
  // quad shared by the lanes and an int8 quad per lane, else the products in 32-bit lanes.
  llvm::Value *dot4(const ExprNode &e, llvm::Value *acc);

  // dot2(a0, a1, b0, b1) plus `acc` (null: 0) in float32: one vdpbf16ps where the operands are a
  // bfloat16 pair shared by the lanes and a pair per lane, else two products and adds.
  llvm::Value *dot2(const ExprNode &e, llvm::Value *acc);

  // Integer arithmetic (signed, as the loop IR's indices are); null for other operators.
  llvm::Value *intArith(BinOp op, llvm::Value *a, llvm::Value *c);

  llvm::Value *binary(const ExprNode &e);

  llvm::Value *expr(const Expr &e);

  // The address of lane 0 of a vector access whose index has coefficient 1 in the lane variable.
  llvm::Value *laneZeroAddress(const BufferRef &buf, const Expr &index);

  // A load in a vector loop: consecutive lanes as one vector load, anything else a gather.
  llvm::Value *vectorLoad(const BufferRef &buf, const Expr &index);

  // A gather's lane indices in 32 bits, as TVM computes indices when shapes fit. The vector
  // units divide and multiply 32-bit lanes by constants in a few instructions; 64-bit lanes
  // have no high multiply, so each lane's division by a constant became scalar code (a blocked
  // layout gathered back to NCHW spent most of its time there). Only used when every buffer has
  // fewer than 2^30 elements: an index expression's partial results are bounded by the buffer
  // it indexes (they are Horner forms of in-range coordinates).
  llvm::Value *narrowIndex(const Expr &e);

  // A vectorised loop with a constant extent of at most 64 lanes whose body qualifies: emitted
  // once, with the loop variable as the vector <0, 1, …, n-1> (TVM's Ramp), so that LLVM sees
  // the vector code the schedule asked for rather than a loop it may or may not vectorise.
  bool vectorLoop(const StmtNode &s);

  void loop(const StmtNode &s);

  // The body of a parallel loop becomes `<fn>_parallel<k>(begin, end, closure)`, which runs the
  // iterations of one thread's share; the closure holds the variables and buffer pointers the
  // body uses, one 8-byte slot each, loaded once per share.
  void parallelLoop(const StmtNode &s);

  void emit(const Stmt &s);

  // A tile of strided vector copies (matchTransposedTile) outside any vector loop, between
  // buffers of one element type (not bool, whose vectors are bits).
  std::optional<TransposedTile> transposableTile(const std::vector<Stmt> &body, size_t first);

  // The tile as L row loads, log2(L) rounds of two-input shuffles and L vector stores, where the
  // loops would gather each vector lane by lane (TVM's transposing copies ran as gathers too;
  // Halide vectorises both loops and shuffles). Round h exchanges bit h of the row and the column
  // index: rows i and i + h (bit h of i clear) trade their h-element blocks at odd block
  // positions, so that after every round element (i, p) is at (p, i).
  void transposedTile(const TransposedTile &t);

  // `<name>_packed(void **args)`: the same function with its buffers in one array.
  void packedWrapper(size_t nargs);

  llvm::Module &m_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  const LoweredFunction &f_;
  const std::string symbol_;
  static constexpr uint64_t kStackBytes = 16384;
  llvm::Function *fn_ = nullptr;
  const ExprNode *vecVar_ = nullptr; ///< the lane variable while a vector loop is emitted
  unsigned lanes_ = 0;
  llvm::Value *mask_ = nullptr; ///< the active lanes of a guarded vector loop (else all)
  bool narrowIndices_ = false;  ///< gathers index in 32 bits (see narrowIndex)
  int laneSelect_ = 0;          ///< inside the sides of a lane-dependent tvm_if_then_else
  std::map<const ExprNode *, llvm::Value *> vars_;
  std::map<std::string, BufferRef> buffers_;
  int parallelCount_ = 0;
  // Debug locations (only with a listing's lines).
  const StmtLines *lines_ = nullptr;
  std::unique_ptr<llvm::DIBuilder> dib_;
  llvm::DIFile *file_ = nullptr;
  llvm::DISubprogram *sp_ = nullptr; ///< the subprogram of the function being generated
  int line_ = 0;
};

} // namespace loupe::backend::codegen
