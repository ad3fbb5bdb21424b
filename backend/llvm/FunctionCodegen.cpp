// FunctionCodegen: one visitor from loop IR to LLVM IR. Parallel loops are outlined into
// `<fn>_parallel<k>(begin, end, closure)` and run through loupe_parallel_for; vectorised loops
// become LLVM vectors (TVM's Ramp) or carry llvm.loop.vectorize metadata.
#include "backend/llvm/FunctionCodegen.h"
#include "backend/llvm/FunctionGen.h"
#include "backend/llvm/HostTarget.h"

#include "backend/loop/TransposedTiles.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/loop/Visitor.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace loupe::backend::codegen {

namespace {

// Variables and buffers used by a statement (to build a parallel body's closure).
struct UseCollector : loop::IRVisitor {
  std::set<const ExprNode *> vars;
  std::set<std::string> bufs;
  void visitExpr(const Expr &e) override {
    if (e->kind == ExprKind::Var)
      vars.insert(e.get());
    if (e->kind == ExprKind::Load)
      bufs.insert(e->name);
    IRVisitor::visitExpr(e);
  }
  void visitStmt(const Stmt &s) override {
    if (s->kind == StmtKind::Store)
      bufs.insert(s->name);
    if (s->kind == StmtKind::Allocate)
      local.insert(s->name);
    IRVisitor::visitStmt(s);
  }
  std::set<std::string> local; ///< allocated inside: not part of a closure
};

// Whether a vectorised loop's body can run as one vector statement per lane group: stores at
// consecutive addresses (index coefficient 1), no inner loops or allocations, branches only on
// conditions that are the same for every lane (a lazy select whose condition differs by lane
// is evaluated under masks).
bool vectorizable(const Stmt &s, const ExprNode *v) {
  struct Check : loop::IRVisitor {
    const ExprNode *v;
    bool ok = true;

    void visitStmt(const Stmt &st) override {
      switch (st->kind) {
      case StmtKind::For:
      case StmtKind::Allocate:
        ok = false;
        return;
      case StmtKind::Store:
        if (linearCoef(foldDivMod(st->a), v) != std::optional<int64_t>(1))
          ok = false;
        break;
      case StmtKind::IfThenElse:
        if (usesVar(st->a, v))
          ok = false;
        break;
      default:
        break;
      }
      IRVisitor::visitStmt(st);
    }
  } c;
  c.v = v;
  c.visitStmt(s);
  return c.ok;
}
} // namespace

/// Generates `f` into `m` as the function `symbol` (with `symbol_packed` and
/// `symbol_parallel<k>`).
FunctionGen::FunctionGen(llvm::Module &m, const LoweredFunction &f, std::string symbol,
                         const StmtLines *lines)
    : m_(m), ctx_(m.getContext()), b_(ctx_), f_(f), symbol_(std::move(symbol)), lines_(lines) {
  if (lines_) {
    dib_ = std::make_unique<llvm::DIBuilder>(m_);
    file_ = dib_->createFile(symbol_ + ".loops", ".");
    dib_->createCompileUnit(llvm::dwarf::DW_LANG_C, file_, "loupe", /*isOptimized=*/true, "", 0);
    if (!m_.getModuleFlag("Debug Info Version"))
      m_.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
    if (!m_.getModuleFlag("Dwarf Version"))
      m_.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
  }
}

void FunctionGen::run() {
  std::vector<llvm::Type *> params;
  std::vector<std::pair<std::string, int>> args;
  for (const ComputeRef &p : f_.inputs)
    args.push_back({p->name, p->dtype});
  for (size_t k = 0; k < f_.outputs.size(); ++k)
    args.push_back({f_.outputBuffers[k], f_.outputs[k]->dtype});
  for (size_t i = 0; i < args.size(); ++i)
    params.push_back(b_.getPtrTy());
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, symbol_, m_);
  vectorWidthAttrs(fn_);
  if (f_.contract) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Argument *a = fn_->getArg(i);
    a->setName(args[i].first);
    a->addAttr(llvm::Attribute::NoAlias);
    buffers_[args[i].first] = {a, args[i].second};
  }
  narrowIndices_ = f_.fast && fitsIn32Bits();
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  describe(fn_);
  emit(f_.body);
  b_.CreateRetVoid();
  packedWrapper(args.size());
  if (dib_)
    dib_->finalize();
}

// With a listing's lines: `fn` gets a subprogram of its own, and the builder's location
// becomes the current line in it (line 0, "no statement", until a statement sets one).
void FunctionGen::describe(llvm::Function *fn) {
  if (!dib_)
    return;
  auto *type = dib_->createSubroutineType(dib_->getOrCreateTypeArray({}));
  sp_ = dib_->createFunction(
      file_, fn->getName(), fn->getName(), file_, 1, type, 1, llvm::DINode::FlagZero,
      llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
  fn->setSubprogram(sp_);
  setLine(line_);
}

// Whether every buffer of the function (arguments and allocations) has fewer than 2^30
// elements, so that its index arithmetic can run in 32 bits (narrowIndex).
bool FunctionGen::fitsIn32Bits() const {
  constexpr int64_t kLimit = int64_t(1) << 30;
  for (const ComputeRef &p : f_.inputs)
    if (numElements(p->shape) >= kLimit)
      return false;
  for (const ComputeRef &o : f_.outputs)
    if (numElements(o->shape) >= kLimit)
      return false;
  struct Allocs : loop::IRVisitor {
    bool small = true;
    void visitStmt(const Stmt &st) override {
      if (st->kind == StmtKind::Allocate) {
        int64_t n = 1;
        for (int64_t x : st->extents)
          n *= x;
        small = small && n < kLimit;
      }
      IRVisitor::visitStmt(st);
    }
  } allocs;
  allocs.visitStmt(f_.body);
  return allocs.small;
}

// A vectorised loop with a constant extent of at most 64 lanes whose body qualifies: emitted
// once, with the loop variable as the vector <0, 1, …, n-1> (TVM's Ramp), so that LLVM sees
// the vector code the schedule asked for rather than a loop it may or may not vectorise.
bool FunctionGen::vectorLoop(const StmtNode &s) {
  int64_t lo, n;
  if (vecVar_ || !constValue(s.a, &lo) || lo != 0 || !constValue(s.b, &n) || n < 2 || n > 64)
    return false;
  // A body under `if (cond)` where cond depends on the lane (the seed schedules' `likely`
  // tail guard) runs with cond as a mask: masked loads and stores, the same operations per
  // lane, so the numbers are those of the scalar loop.
  const Stmt &body = s.body[0];
  bool guarded =
      body->kind == StmtKind::IfThenElse && body->body.size() == 1 && usesVar(body->a, s.var.get());
  if (!vectorizable(guarded ? body->body[0] : body, s.var.get()))
    return false;
  std::vector<llvm::Constant *> ramp;
  for (int64_t i = 0; i < n; ++i)
    ramp.push_back(b_.getInt64(static_cast<uint64_t>(i)));
  vecVar_ = s.var.get();
  lanes_ = static_cast<unsigned>(n);
  vars_[vecVar_] = llvm::ConstantVector::get(ramp);
  if (guarded) {
    mask_ = splat(convert(expr(body->a), body->a->dtype, kBool), lanes_);
    // Loads that do not depend on the lane run only when some lane does, as in the loop.
    llvm::BasicBlock *active = llvm::BasicBlock::Create(ctx_, "lanes.active", fn_),
                     *done = llvm::BasicBlock::Create(ctx_, "lanes.done", fn_);
    b_.CreateCondBr(b_.CreateOrReduce(mask_), active, done);
    b_.SetInsertPoint(active);
    emit(body->body[0]);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    mask_ = nullptr;
  } else {
    emit(body);
  }
  vars_.erase(vecVar_);
  vecVar_ = nullptr;
  lanes_ = 0;
  return true;
}

void FunctionGen::loop(const StmtNode &s) {
  if ((s.forKind == ForKind::Vectorized || s.forKind == ForKind::Scalarized) && vectorLoop(s))
    return;
  llvm::Value *lo = expr(s.a), *extent = expr(s.b);
  llvm::Value *hi = b_.CreateAdd(lo, extent);
  llvm::BasicBlock *pre = b_.GetInsertBlock(),
                   *head = llvm::BasicBlock::Create(ctx_, s.var->name + ".head", fn_),
                   *body = llvm::BasicBlock::Create(ctx_, s.var->name + ".body", fn_),
                   *exit = llvm::BasicBlock::Create(ctx_, s.var->name + ".exit", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *i = b_.CreatePHI(b_.getInt64Ty(), 2, s.var->name);
  i->addIncoming(lo, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, hi), body, exit);
  b_.SetInsertPoint(body);
  vars_[s.var.get()] = i;
  emit(s.body[0]);
  llvm::Value *next = b_.CreateAdd(i, b_.getInt64(1));
  llvm::BranchInst *back = b_.CreateBr(head);
  i->addIncoming(next, b_.GetInsertBlock());
  // (A fast function's vector loops that vectorLoop declined are left to LLVM's cost model:
  // forcing them only earns a "loop not vectorized" warning where LLVM cannot.)
  if (s.forKind == ForKind::Vectorized && !f_.fast) {
    llvm::MDNode *enable =
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                 llvm::ConstantAsMetadata::get(b_.getTrue())});
    llvm::MDNode *self = llvm::MDNode::getDistinct(ctx_, {nullptr, enable});
    self->replaceOperandWith(0, self);
    back->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  vars_.erase(s.var.get());
  b_.SetInsertPoint(exit);
}

// The body of a parallel loop becomes `<fn>_parallel<k>(begin, end, closure)`, which runs the
// iterations of one thread's share; the closure holds the variables and buffer pointers the
// body uses, one 8-byte slot each, loaded once per share.
void FunctionGen::parallelLoop(const StmtNode &s) {
  UseCollector uses;
  uses.visitStmt(s.body[0]);
  const std::set<std::string> &usedBufs = uses.bufs;
  std::vector<const ExprNode *> vars;
  for (const ExprNode *v : uses.vars)
    if (vars_.count(v))
      vars.push_back(v);
  std::vector<std::string> bufs;
  for (const std::string &bname : usedBufs)
    if (!uses.local.count(bname))
      bufs.push_back(bname);
  size_t slots = vars.size() + bufs.size();
  llvm::Type *i64 = b_.getInt64Ty();
  llvm::Value *closure = b_.CreateAlloca(i64, b_.getInt64(std::max<size_t>(slots, 1)));
  size_t k = 0;
  for (const ExprNode *v : vars)
    b_.CreateStore(vars_.at(v), b_.CreateConstGEP1_64(i64, closure, k++));
  for (const std::string &bname : bufs)
    b_.CreateStore(buffer(bname).ptr, b_.CreateConstGEP1_64(i64, closure, k++));

  auto *bodyTy = llvm::FunctionType::get(b_.getVoidTy(), {i64, i64, b_.getPtrTy()}, false);
  auto *bodyFn =
      llvm::Function::Create(bodyTy, llvm::Function::InternalLinkage,
                             symbol_ + "_parallel" + std::to_string(parallelCount_++), m_);
  vectorWidthAttrs(bodyFn);
  // Generate the body in the new function, then come back.
  llvm::Function *savedFn = fn_;
  llvm::BasicBlock *savedBlock = b_.GetInsertBlock();
  auto savedVars = vars_;
  auto savedBufs = buffers_;
  fn_ = bodyFn;
  llvm::DISubprogram *savedSp = sp_;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", bodyFn));
  describe(bodyFn);
  llvm::Value *cl = bodyFn->getArg(2);
  k = 0;
  std::vector<llvm::Value *> captured;
  for (size_t slot = 0; slot < vars.size(); ++slot)
    captured.push_back(b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, cl, k++)));
  for (size_t slot = 0; slot < bufs.size(); ++slot)
    captured.push_back(b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(i64, cl, k++)));
  llvm::Value *begin = bodyFn->getArg(0), *end = bodyFn->getArg(1);
  if (f_.fast) {
    // At opt_level 3 the share is a function of its own whose buffer pointers are `noalias`
    // arguments, as the kernel's are, called once and inlined: the inliner turns `noalias`
    // into scope metadata, so that LLVM may still keep a tile accumulated in a buffer in
    // registers across its reduction loop (read from a closure, the pointers could alias).
    std::vector<llvm::Type *> params{i64, i64};
    for (llvm::Value *v : captured)
      params.push_back(v->getType());
    auto *innerFn =
        llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                               llvm::Function::InternalLinkage, bodyFn->getName() + "_body", m_);
    vectorWidthAttrs(innerFn);
    innerFn->addFnAttr(llvm::Attribute::AlwaysInline);
    for (size_t a = 2 + vars.size(); a < params.size(); ++a)
      innerFn->getArg(static_cast<unsigned>(a))->addAttr(llvm::Attribute::NoAlias);
    std::vector<llvm::Value *> callArgs{begin, end};
    callArgs.insert(callArgs.end(), captured.begin(), captured.end());
    b_.CreateCall(innerFn, callArgs);
    b_.CreateRetVoid();
    fn_ = innerFn;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", innerFn));
    describe(innerFn);
    begin = innerFn->getArg(0);
    end = innerFn->getArg(1);
    for (size_t a = 0; a < captured.size(); ++a)
      captured[a] = innerFn->getArg(static_cast<unsigned>(a + 2));
  }
  for (size_t slot = 0; slot < vars.size(); ++slot)
    vars_[vars[slot]] = captured[slot];
  for (size_t slot = 0; slot < bufs.size(); ++slot)
    buffers_[bufs[slot]] = {captured[vars.size() + slot], buffers_.at(bufs[slot]).dtype};
  // The share's iterations: for (i = begin; i < end; ++i) body at s.var = min + i.
  llvm::BasicBlock *pre = b_.GetInsertBlock(),
                   *head = llvm::BasicBlock::Create(ctx_, s.var->name + ".head", fn_),
                   *body = llvm::BasicBlock::Create(ctx_, s.var->name + ".body", fn_),
                   *exit = llvm::BasicBlock::Create(ctx_, s.var->name + ".exit", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *i = b_.CreatePHI(i64, 2, s.var->name + ".share");
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body, exit);
  b_.SetInsertPoint(body);
  vars_[s.var.get()] = b_.CreateAdd(i, expr(s.a));
  emit(s.body[0]);
  i->addIncoming(b_.CreateAdd(i, b_.getInt64(1)), b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
  fn_ = savedFn;
  vars_ = savedVars;
  buffers_ = savedBufs;
  b_.SetInsertPoint(savedBlock);
  sp_ = savedSp;
  setLine(line_);

  llvm::FunctionCallee pfor = m_.getOrInsertFunction(
      "loupe_parallel_for",
      llvm::FunctionType::get(b_.getVoidTy(), {i64, b_.getPtrTy(), b_.getPtrTy()}, false));
  b_.CreateCall(pfor, {expr(s.b), bodyFn, closure});
}

void FunctionGen::emit(const Stmt &s) {
  LineScope at(*this, s.get());
  switch (s->kind) {
  case StmtKind::For:
    if (s->forKind == ForKind::Parallel)
      parallelLoop(*s);
    else
      loop(*s);
    return;
  case StmtKind::Store: {
    BufferRef buf = buffer(s->name);
    llvm::Value *v = convert(expr(s->b), s->b->dtype, buf.dtype);
    if (buf.dtype == kBFloat16)
      v = narrowBF16(v);
    else if (!isFloat(buf.dtype) && buf.dtype != kBool)
      v = b_.CreateSExtOrTrunc(v, withLanes(elemType(buf.dtype), v));
    Expr index = foldDivMod(s->a);
    if (vecVar_) { // vectorizable() checked the index is consecutive in the lanes
      llvm::Align align = m_.getDataLayout().getABITypeAlign(elemType(buf.dtype));
      if (mask_)
        b_.CreateMaskedStore(splat(v, lanes_), laneZeroAddress(buf, index), align, mask_);
      else
        b_.CreateAlignedStore(splat(v, lanes_), laneZeroAddress(buf, index), align);
      return;
    }
    b_.CreateStore(v, address(buf, index));
    return;
  }
  case StmtKind::Allocate: {
    int64_t n = 1;
    for (int64_t e : s->extents)
      n *= e;
    llvm::Type *et = elemType(s->dtype);
    if (s->a) {
      // A generic kernel's intermediate of symbolic size: on the heap, its size computed here.
      llvm::FunctionCallee mallocFn = m_.getOrInsertFunction(
          "malloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
      llvm::FunctionCallee freeFn = m_.getOrInsertFunction(
          "free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
      uint64_t width = m_.getDataLayout().getTypeAllocSize(et);
      llvm::Value *bytes = b_.CreateMul(expr(s->a), b_.getInt64(width));
      llvm::Value *p = b_.CreateCall(mallocFn, {bytes}, s->name);
      buffers_[s->name] = {p, s->dtype};
      emit(s->body[0]);
      buffers_.erase(s->name);
      b_.CreateCall(freeFn, {p});
      return;
    }
    uint64_t bytes = m_.getDataLayout().getTypeAllocSize(et) * static_cast<uint64_t>(n);
    if (bytes <= kStackBytes) {
      // Small buffers (a register tile's accumulator) live on the stack, allocated once in the
      // function's entry block, where LLVM can promote them to registers.
      llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      llvm::AllocaInst *a = entry.CreateAlloca(et, entry.getInt64(n), s->name);
      a->setAlignment(llvm::Align(64));
      buffers_[s->name] = {a, s->dtype};
      emit(s->body[0]);
      buffers_.erase(s->name);
      return;
    }
    llvm::FunctionCallee mallocFn = m_.getOrInsertFunction(
        "malloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
    llvm::FunctionCallee freeFn = m_.getOrInsertFunction(
        "free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
    llvm::Value *p = b_.CreateCall(mallocFn, {b_.getInt64(bytes)}, s->name);
    buffers_[s->name] = {p, s->dtype};
    emit(s->body[0]);
    buffers_.erase(s->name);
    b_.CreateCall(freeFn, {p});
    return;
  }
  case StmtKind::Attr:
  case StmtKind::Produce:
    emit(s->body[0]);
    return;
  case StmtKind::IfThenElse: {
    llvm::Value *c = convert(expr(s->a), s->a->dtype, kBool);
    llvm::BasicBlock *thenBB = llvm::BasicBlock::Create(ctx_, "then", fn_),
                     *done = llvm::BasicBlock::Create(ctx_, "endif", fn_);
    llvm::BasicBlock *elseBB =
        s->body.size() > 1 ? llvm::BasicBlock::Create(ctx_, "else", fn_) : done;
    b_.CreateCondBr(c, thenBB, elseBB);
    b_.SetInsertPoint(thenBB);
    emit(s->body[0]);
    b_.CreateBr(done);
    if (s->body.size() > 1) {
      b_.SetInsertPoint(elseBB);
      emit(s->body[1]);
      b_.CreateBr(done);
    }
    b_.SetInsertPoint(done);
    return;
  }
  case StmtKind::Seq:
    for (size_t i = 0; i < s->body.size();) {
      if (std::optional<TransposedTile> t = transposableTile(s->body, i)) {
        transposedTile(*t);
        i += t->at.size();
      } else {
        emit(s->body[i++]);
      }
    }
    return;
  case StmtKind::LetStmt:
    vars_[s->var.get()] = expr(s->a);
    emit(s->body[0]);
    vars_.erase(s->var.get());
    return;
  }
}

// A tile of strided vector copies (matchTransposedTile) outside any vector loop, between
// buffers of one element type (not bool, whose vectors are bits).
std::optional<TransposedTile> FunctionGen::transposableTile(const std::vector<Stmt> &body,
                                                            size_t first) {
  if (vecVar_ || mask_)
    return std::nullopt;
  std::optional<TransposedTile> t = matchTransposedTile(body, first);
  if (!t || t->dtype == kBool || !buffers_.count(t->src) || !buffers_.count(t->dst) ||
      buffers_.at(t->src).dtype != t->dtype || buffers_.at(t->dst).dtype != t->dtype)
    return std::nullopt;
  return t;
}

// The tile as L row loads, log2(L) rounds of two-input shuffles and L vector stores, where the
// loops would gather each vector lane by lane (TVM's transposing copies ran as gathers too;
// Halide vectorises both loops and shuffles). Round h exchanges bit h of the row and the column
// index: rows i and i + h (bit h of i clear) trade their h-element blocks at odd block
// positions, so that after every round element (i, p) is at (p, i).
void FunctionGen::transposedTile(const TransposedTile &t) {
  llvm::Type *et = elemType(t.dtype);
  auto lanes = static_cast<unsigned>(t.lanes);
  auto *vt = llvm::FixedVectorType::get(et, lanes);
  llvm::Align align = m_.getDataLayout().getABITypeAlign(et);
  BufferRef src = buffer(t.src), dst = buffer(t.dst);
  std::vector<llvm::Value *> rows;
  {
    LineScope at(*this, t.at.front());
    llvm::Value *first = expr(t.firstRow);
    for (unsigned j = 0; j < lanes; ++j) {
      llvm::Value *start = b_.CreateAdd(first, b_.getInt64(j * t.rowStride));
      rows.push_back(b_.CreateAlignedLoad(vt, b_.CreateGEP(et, src.ptr, start), align));
    }
    for (unsigned h = 1; h < lanes; h *= 2) {
      std::vector<int> low, high;
      for (unsigned p = 0; p < lanes; ++p) {
        bool odd = (p & h) != 0;
        low.push_back(static_cast<int>(odd ? lanes + p - h : p));
        high.push_back(static_cast<int>(odd ? lanes + p : p + h));
      }
      for (unsigned i = 0; i < lanes; ++i)
        if ((i & h) == 0) {
          llvm::Value *a = rows[i], *c = rows[i + h];
          rows[i] = b_.CreateShuffleVector(a, c, low);
          rows[i + h] = b_.CreateShuffleVector(a, c, high);
        }
    }
  }
  for (unsigned c = 0; c < lanes; ++c) {
    LineScope at(*this, t.at[c]);
    b_.CreateAlignedStore(rows[c], address(dst, t.columnStarts[c]), align);
  }
}

// `<name>_packed(void **args)`: the same function with its buffers in one array.
void FunctionGen::packedWrapper(size_t nargs) {
  auto *ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
  auto *w = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, symbol_ + "_packed", m_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", w));
  describe(w); // the call may be inlined: its instructions keep their lines
  setLine(0);
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < nargs; ++i)
    args.push_back(
        b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), w->getArg(0), i)));
  b_.CreateCall(fn_, args);
  b_.CreateRetVoid();
}
} // namespace loupe::backend::codegen

namespace loupe::backend {

namespace {
std::optional<DotInstructions> &dotOverride() {
  static std::optional<DotInstructions> d;
  return d;
}
} // namespace

DotInstructions dotInstructions() {
  if (dotOverride())
    return *dotOverride();
  static const DotInstructions host = [] {
    DotInstructions d;
    d.lanes16 = codegenHas("avx512vnni");
    d.lanes8 = codegenHas("avxvnni") || (codegenHas("avx512vnni") && codegenHas("avx512vl"));
    d.pairs16 = codegenHas("avx512bw");
    d.pairs8 = codegenHas("avx2");
    return d;
  }();
  return host;
}

void setDotInstructions(std::optional<DotInstructions> d) { dotOverride() = d; }

void generateFunction(llvm::Module &m, const LoweredFunction &f, const std::string &symbol,
                      const loop::StmtLines *lines) {
  codegen::FunctionGen(m, f, symbol, lines).run();
}

// A weak `loupe_parallel_for(n, body, closure)` that runs the whole range as one share, for
// exported code.
void addSerialParallelFor(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *ty =
      llvm::FunctionType::get(b.getVoidTy(), {b.getInt64Ty(), b.getPtrTy(), b.getPtrTy()}, false);
  llvm::Function *f = m.getFunction("loupe_parallel_for");
  if (!f)
    f = llvm::Function::Create(ty, llvm::Function::WeakAnyLinkage, "loupe_parallel_for", m);
  f->setLinkage(llvm::Function::WeakAnyLinkage);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", f),
       *body = llvm::BasicBlock::Create(ctx, "body", f),
       *done = llvm::BasicBlock::Create(ctx, "done", f);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(0), b.getInt64(0)), body, done);
  b.SetInsertPoint(body);
  auto *bodyTy =
      llvm::FunctionType::get(b.getVoidTy(), {b.getInt64Ty(), b.getInt64Ty(), b.getPtrTy()}, false);
  b.CreateCall(bodyTy, f->getArg(1), {b.getInt64(0), f->getArg(0), f->getArg(2)});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

} // namespace loupe::backend
