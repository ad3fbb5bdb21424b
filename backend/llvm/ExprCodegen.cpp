// ExprCodegen: FunctionGen's expressions — loop IR values, calls, integer and float arithmetic,
// conversions between dtypes, loads (vector, gathered, 32-bit indexed) — as LLVM IR.
#include "backend/llvm/FunctionCodegen.h"
#include "backend/llvm/FunctionGen.h"
#include "backend/llvm/HostTarget.h"

#include "core/Error.h"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstring>

namespace loupe::backend::codegen {

llvm::Type *FunctionGen::elemType(int dtype) {
  switch (dtype) {
  case kFloat32:
    return b_.getFloatTy();
  case kFloat64:
    return b_.getDoubleTy();
  case kFloat16:
    return b_.getHalfTy();
  case kBFloat16: // its bits; it computes as float32 (valueType)
    return b_.getInt16Ty();
  case kInt8:
  case kUint8:
  case kBoolean: // a bool tensor's byte; its values compute as integers 0 and 1
    return b_.getInt8Ty();
  case kInt16:
  case kUint16:
    return b_.getInt16Ty();
  case kInt32:
  case kUint32:
    return b_.getInt32Ty();
  case kBool:
    return b_.getInt1Ty();
  default:
    return b_.getInt64Ty();
  }
}

// The type expressions of a dtype compute in: floats as themselves, integers as i64.
llvm::Type *FunctionGen::valueType(int dtype) {
  if (dtype == kBool)
    return b_.getInt1Ty();
  if (dtype == kBFloat16)
    return b_.getFloatTy();
  return isFloat(dtype) ? elemType(dtype) : b_.getInt64Ty();
}

// bfloat16 rounding in integer arithmetic, as DType's bfloat16Bits does it, so that every CPU
// computes the reference's bits (LLVM's own bfloat conversion calls a runtime function older
// libgcc lacks).
llvm::Value *FunctionGen::roundBF16(llvm::Value *v) {
  llvm::Type *i32 = withLanes(b_.getInt32Ty(), v);
  auto k = [&](uint32_t c) { return llvm::ConstantInt::get(i32, c); };
  llvm::Value *bits = b_.CreateBitCast(v, i32);
  llvm::Value *lsb = b_.CreateAnd(b_.CreateLShr(bits, k(16)), k(1));
  llvm::Value *rounded =
      b_.CreateAnd(b_.CreateAdd(bits, b_.CreateAdd(lsb, k(0x7fff))), k(0xffff0000u));
  llvm::Value *quiet = b_.CreateAnd(b_.CreateOr(bits, k(0x400000)), k(0xffff0000u));
  llvm::Value *nan = b_.CreateFCmpUNO(v, v);
  return b_.CreateBitCast(b_.CreateSelect(nan, quiet, rounded), v->getType());
}

llvm::Value *FunctionGen::widenBF16(llvm::Value *bits) {
  llvm::Type *i32 = withLanes(b_.getInt32Ty(), bits);
  llvm::Value *wide = b_.CreateShl(b_.CreateZExt(bits, i32), llvm::ConstantInt::get(i32, 16));
  return b_.CreateBitCast(wide, withLanes(b_.getFloatTy(), bits));
}

llvm::Value *FunctionGen::narrowBF16(llvm::Value *v) {
  llvm::Type *i32 = withLanes(b_.getInt32Ty(), v);
  llvm::Value *bits = b_.CreateLShr(b_.CreateBitCast(v, i32), llvm::ConstantInt::get(i32, 16));
  return b_.CreateTrunc(bits, withLanes(b_.getInt16Ty(), v));
}

// `v` broadcast to `lanes` lanes (unchanged if it is a vector already or lanes is 0).
llvm::Value *FunctionGen::splat(llvm::Value *v, unsigned lanes) {
  if (lanes == 0 || v->getType()->isVectorTy())
    return v;
  return b_.CreateVectorSplat(lanes, v);
}

// Makes two operands agree: a scalar next to a vector is broadcast.
void FunctionGen::matchLanes(llvm::Value *&a, llvm::Value *&b) {
  unsigned n = std::max(lanesOf(a), lanesOf(b));
  a = splat(a, n);
  b = splat(b, n);
}

namespace {

// Whether every value of integer type `dtype` is an int32.
bool fitsInt32(int dtype) {
  return dtype == kInt8 || dtype == kUint8 || dtype == kInt16 || dtype == kUint16 ||
         dtype == kInt32;
}

} // namespace

llvm::Value *FunctionGen::convert(llvm::Value *v, int from, int to) {
  if (to == kBFloat16 && from != kBFloat16)
    return roundBF16(convert(v, from, kFloat32));
  llvm::Type *t = withLanes(valueType(to), v);
  if (v->getType() == t)
    return v;
  bool ff = isFloat(from), tf = isFloat(to);
  if (to == kBoolean && from != kBoolean) // any nonzero value is true, not truncated
    return b_.CreateZExt(convert(v, from, kBool), t);
  if (ff && tf)
    return b_.CreateFPCast(v, t);
  // Integers live in 64-bit lanes; those of types int32 holds convert to and from floats through
  // 32 bits (vcvtdq2ps, vcvttps2dq: 16 lanes to a zmm, where the 64-bit forms take 8), which is
  // exact for every value of the type.
  bool narrow = !isFloat(to) ? fitsInt32(to) : fitsInt32(from);
  llvm::Type *i32 = withLanes(b_.getInt32Ty(), v);
  if (ff) {
    if (to == kBool)
      return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return narrow ? b_.CreateSExt(b_.CreateFPToSI(v, i32), t) : b_.CreateFPToSI(v, t);
  }
  if (tf) {
    if (narrow && from != kBool)
      return b_.CreateSIToFP(b_.CreateTrunc(v, i32), t);
    return from == kBool || from == kUint64 ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t);
  }
  if (to == kBool)
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  return from == kBool ? b_.CreateZExt(v, t) : b_.CreateSExtOrTrunc(v, t);
}

FunctionGen::BufferRef FunctionGen::buffer(const std::string &name) {
  auto it = buffers_.find(name);
  if (it == buffers_.end())
    fail("codegen ", f_.name, ": unknown buffer ", name);
  return it->second;
}

llvm::Value *FunctionGen::address(const BufferRef &buf, const Expr &index) {
  return b_.CreateGEP(elemType(buf.dtype), buf.ptr, expr(index));
}

llvm::Value *FunctionGen::intrinsic(llvm::Intrinsic::ID id, llvm::Value *x) {
  return b_.CreateUnaryIntrinsic(id, x);
}

// A libm call; on a vector, one call per lane.
llvm::Value *FunctionGen::libm(const char *base, llvm::Value *x) {
  if (x->getType()->getScalarType()->isHalfTy()) // libm has no half functions: via float
    return b_.CreateFPTrunc(libm(base, b_.CreateFPExt(x, withLanes(b_.getFloatTy(), x))),
                            x->getType());
  llvm::Type *et = x->getType()->getScalarType();
  std::string name = std::string(base) + (et->isFloatTy() ? "f" : "");
  llvm::FunctionCallee callee =
      m_.getOrInsertFunction(name, llvm::FunctionType::get(et, {et}, false));
  unsigned n = lanesOf(x);
  if (n == 0)
    return b_.CreateCall(callee, {x});
  llvm::Value *r = llvm::PoisonValue::get(x->getType());
  for (unsigned i = 0; i < n; ++i)
    r = b_.CreateInsertElement(r, b_.CreateCall(callee, {b_.CreateExtractElement(x, i)}), i);
  return r;
}

llvm::Value *FunctionGen::call(const ExprNode &e) {
  const std::string &f = e.name;
  if (f == "tvm_if_then_else") {
    llvm::Value *c = expr(e.args[0]);
    if (lanesOf(c) > 0) {
      // A condition that differs by lane (padding at the row's ends): each side is evaluated
      // with its loads masked to the lanes that take it, then the lanes are selected.
      llvm::Value *outer = mask_;
      auto within = [&](llvm::Value *m) { return outer ? b_.CreateAnd(outer, m) : m; };
      ++laneSelect_;
      mask_ = within(c);
      llvm::Value *a = splat(convert(expr(e.args[1]), e.args[1]->dtype, e.dtype), lanes_);
      mask_ = within(b_.CreateNot(c));
      llvm::Value *bv = splat(convert(expr(e.args[2]), e.args[2]->dtype, e.dtype), lanes_);
      mask_ = outer;
      --laneSelect_;
      return b_.CreateSelect(c, a, bv);
    }
    // Lazy: the untaken side may read out of bounds (padding), so branch.
    llvm::BasicBlock *thenBB = llvm::BasicBlock::Create(ctx_, "if_then", fn_),
                     *elseBB = llvm::BasicBlock::Create(ctx_, "if_else", fn_),
                     *done = llvm::BasicBlock::Create(ctx_, "if_end", fn_);
    b_.CreateCondBr(c, thenBB, elseBB);
    b_.SetInsertPoint(thenBB);
    // In a vector loop both sides are made vectors: either may read the lane variable.
    llvm::Value *a = splat(convert(expr(e.args[1]), e.args[1]->dtype, e.dtype), lanes_);
    llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(elseBB);
    llvm::Value *bv = splat(convert(expr(e.args[2]), e.args[2]->dtype, e.dtype), lanes_);
    llvm::BasicBlock *elseEnd = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode *phi = b_.CreatePHI(a->getType(), 2);
    phi->addIncoming(a, thenEnd);
    phi->addIncoming(bv, elseEnd);
    return phi;
  }
  if (f == "likely")
    return expr(e.args[0]);
  if (f == "q_multiply_shift")
    return multiplyShift(e);
  if (f == "dot4")
    return dot4(e, nullptr);
  if (f == "dot2")
    return dot2(e, nullptr);
  llvm::Value *x = convert(expr(e.args[0]), e.args[0]->dtype, e.dtype);
  if (f == "exp")
    return intrinsic(llvm::Intrinsic::exp, x);
  if (f == "log")
    return intrinsic(llvm::Intrinsic::log, x);
  if (f == "sqrt")
    return intrinsic(llvm::Intrinsic::sqrt, x);
  if (f == "fabs")
    return intrinsic(llvm::Intrinsic::fabs, x);
  if (f == "floor")
    return intrinsic(llvm::Intrinsic::floor, x);
  if (f == "ceil")
    return intrinsic(llvm::Intrinsic::ceil, x);
  if (f == "round")
    return intrinsic(llvm::Intrinsic::round, x);
  if (f == "roundeven")
    return intrinsic(llvm::Intrinsic::roundeven, x);
  if (f == "trunc")
    return intrinsic(llvm::Intrinsic::trunc, x);
  if (isLibmFunction(f))
    return libm(f.c_str(), x);
  if (f == "tanh")
    return libm("tanh", x);
  if (f == "sigmoid") {
    llvm::Value *one = llvm::ConstantFP::get(x->getType(), 1.0);
    llvm::Value *ex = intrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(x));
    return b_.CreateFDiv(one, b_.CreateFAdd(one, ex));
  }
  if (f == "ldexp") {
    // x * 2^n for an integral n whose biased exponent is normal (FastMath clamps it): the
    // scale is built in the exponent bits, no libm call.
    llvm::Value *n = convert(expr(e.args[1]), e.args[1]->dtype, e.dtype);
    matchLanes(x, n);
    bool f64 = x->getType()->getScalarType()->isDoubleTy();
    llvm::Type *bits = withLanes(f64 ? b_.getInt64Ty() : b_.getInt32Ty(), x);
    llvm::Value *exponent =
        b_.CreateAdd(b_.CreateFPToSI(n, bits), llvm::ConstantInt::get(bits, f64 ? 1023 : 127));
    llvm::Value *scale = b_.CreateBitCast(
        b_.CreateShl(exponent, llvm::ConstantInt::get(bits, f64 ? 52 : 23)), x->getType());
    return b_.CreateFMul(x, scale);
  }
  if (f == "pow") {
    llvm::Value *y = convert(expr(e.args[1]), e.args[1]->dtype, e.dtype);
    matchLanes(x, y);
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y);
  }
  fail("codegen ", f_.name, ": no LLVM lowering for intrinsic ", f);
}

// q_multiply_shift(x, multiplier, shift): round(x · multiplier · 2^(shift − 31)), ties upward, in
// 64-bit lanes — core/Quantize's multiplyShift, instruction for instruction: x shifted left by
// max(shift, 0), multiplied, the rounding offset added, shifted right (arithmetic) by
// 31 + max(−shift, 0).
llvm::Value *FunctionGen::multiplyShift(const ExprNode &e) {
  llvm::Value *x = convert(expr(e.args[0]), e.args[0]->dtype, kInt64);
  llvm::Value *m = convert(expr(e.args[1]), e.args[1]->dtype, kInt64);
  llvm::Value *s = convert(expr(e.args[2]), e.args[2]->dtype, kInt64);
  matchLanes(x, m);
  matchLanes(x, s);
  matchLanes(m, s);
  llvm::Type *t = x->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true); };
  llvm::Value *left = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, s, c(0));
  llvm::Value *right =
      b_.CreateAdd(c(31), b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateNeg(s), c(0)));
  llvm::Value *p = b_.CreateMul(b_.CreateShl(x, left), m);
  llvm::Value *half = b_.CreateShl(c(1), b_.CreateSub(right, c(1)));
  return convert(b_.CreateAShr(b_.CreateAdd(p, half), right), kInt64, e.dtype);
}

namespace {

// Whether loads `args[first..first+n-1]` read n consecutive elements of one buffer of `dtype`:
// the same index but for a constant term that grows by one.
bool consecutiveLoads(const std::vector<Expr> &args, size_t first, size_t n, int dtype) {
  const Expr &a = args[first];
  if (a->kind != ExprKind::Load || a->dtype != dtype)
    return false;
  auto [terms, base] = splitConstant(foldDivMod(a->args[0]));
  std::string shape = terms ? printExpr(terms) : "";
  for (size_t j = 1; j < n; ++j) {
    const Expr &b = args[first + j];
    if (b->kind != ExprKind::Load || b->name != a->name)
      return false;
    auto [t, c] = splitConstant(foldDivMod(b->args[0]));
    if ((t ? printExpr(t) : "") != shape || c != base + static_cast<int64_t>(j))
      return false;
  }
  return true;
}

} // namespace

// dot4(a0, a1, a2, a3, b0, b1, b2, b3) = Σ aj·bj in int32, plus `acc`. In a vector loop whose
// lanes share four consecutive uint8 data (the input channels of one pixel) and read four
// consecutive int8 weights each (OIHW<o>o4i: lane v's at 4v), it is one vpdpbusd: the data
// quad as a 32-bit word broadcast to every lane, the lanes' weight quads as one vector load;
// without VNNI the same two loads feed two vpmaddwd where the code may use them (AVX2,
// AVX-512BW), else four 32-bit multiplies. Elsewhere (other operands, a scalar loop) the products
// are summed in 32-bit lanes — the same sum, as the instruction's products and sums do not
// overflow 32 bits.
llvm::Value *FunctionGen::dot4(const ExprNode &e, llvm::Value *acc) {
  DotInstructions dot = dotInstructions();
  const std::vector<Expr> &args = e.args;
  // The layout the packed convolutions give: a shared uint8 quad, an int8 quad per lane.
  bool quads = vecVar_ && !mask_ && e.dtype == kInt32 && consecutiveLoads(args, 0, 4, kUint8) &&
               consecutiveLoads(args, 4, 4, kInt8) && !usesVar(args[0]->args[0], vecVar_) &&
               linearCoef(foldDivMod(args[4]->args[0]), vecVar_) == std::optional<int64_t>(4);
  llvm::Type *i32 = b_.getInt32Ty();
  if (quads) {
    auto *vt = llvm::FixedVectorType::get(i32, lanes_);
    llvm::Value *sum =
        acc ? b_.CreateTrunc(splat(acc, lanes_), vt) : llvm::Constant::getNullValue(vt);
    llvm::Value *data = b_.CreateAlignedLoad(
        i32, address(buffer(args[0]->name), foldDivMod(args[0]->args[0])), llvm::Align(1));
    llvm::Value *bytes = b_.CreateAlignedLoad(
        llvm::FixedVectorType::get(b_.getInt8Ty(), 4 * lanes_),
        laneZeroAddress(buffer(args[4]->name), args[4]->args[0]), llvm::Align(1));
    if ((lanes_ == 16 && dot.lanes16) || (lanes_ == 8 && dot.lanes8)) {
      llvm::Intrinsic::ID id = lanes_ == 16 ? llvm::Intrinsic::x86_avx512_vpdpbusd_512
                                            : llvm::Intrinsic::x86_avx512_vpdpbusd_256;
      llvm::Value *r = b_.CreateIntrinsic(
          id, {}, {sum, b_.CreateVectorSplat(lanes_, data), b_.CreateBitCast(bytes, vt)});
      return b_.CreateSExt(r, withLanes(b_.getInt64Ty(), r));
    }
    if ((lanes_ == 16 && dot.pairs16) || (lanes_ == 8 && dot.pairs8)) {
      // Without VNNI, vpmaddwd: 16-bit products summed in pairs into 32-bit lanes, exact for 8-bit
      // operands (|2·255·128| < 2^31; vpmaddubsw's 16-bit sums would saturate). Lane v's weight
      // bytes 4v, 4v+1 and 4v+2, 4v+3 become two vectors of sign-extended pairs, the data quad
      // broadcast and spread into zero-extended pairs (d0, d1) and (d2, d3) in every lane; two
      // vpmaddwd and two adds per step (resnet-18, one thread, Zen 5 with VNNI turned off: see
      // docs/performance.md "int8 without VNNI").
      auto *pairs = llvm::FixedVectorType::get(b_.getInt16Ty(), 2 * lanes_);
      llvm::Intrinsic::ID id = lanes_ == 16 ? llvm::Intrinsic::x86_avx512_pmaddw_d_512
                                            : llvm::Intrinsic::x86_avx2_pmadd_wd;
      auto *byteVec = llvm::FixedVectorType::get(b_.getInt8Ty(), 4 * lanes_);
      llvm::Value *quad = b_.CreateBitCast(b_.CreateVectorSplat(lanes_, data), byteVec);
      llvm::Value *zeros = llvm::Constant::getNullValue(byteVec);
      for (unsigned half = 0; half < 2; ++half) {
        std::vector<int> pick;
        for (unsigned v = 0; v < lanes_; ++v)
          for (unsigned j = 0; j < 2; ++j)
            pick.push_back(static_cast<int>(4 * v + 2 * half + j));
        llvm::Value *w = b_.CreateSExt(b_.CreateShuffleVector(bytes, pick), pairs);
        // The data's bytes 2h and 2h+1 zero-extended into each lane's two 16-bit halves: one
        // byte shuffle (vpshufb, zeros from the second operand) of the broadcast quad.
        std::vector<int> spread;
        for (unsigned v = 0; v < lanes_; ++v)
          for (int byte :
               {4 * static_cast<int>(v) + 2 * static_cast<int>(half), static_cast<int>(4 * lanes_),
                4 * static_cast<int>(v) + 2 * static_cast<int>(half) + 1,
                static_cast<int>(4 * lanes_)})
            spread.push_back(byte);
        llvm::Value *d = b_.CreateBitCast(b_.CreateShuffleVector(quad, zeros, spread), pairs);
        sum = b_.CreateAdd(sum, b_.CreateIntrinsic(id, {}, {d, w}));
      }
      return b_.CreateSExt(sum, withLanes(b_.getInt64Ty(), sum));
    }
    // Without either: the weight quads loaded once, split by shuffles into their four channels
    // (lane v's j-th weight is byte 4v + j), each widened and multiplied by its data byte
    // broadcast — contiguous loads, not a gather per weight (resnet-18: 28 ms against 138, one
    // thread).
    for (unsigned j = 0; j < 4; ++j) {
      std::vector<int> pick;
      for (unsigned v = 0; v < lanes_; ++v)
        pick.push_back(static_cast<int>(4 * v + j));
      llvm::Value *w = b_.CreateSExt(b_.CreateShuffleVector(bytes, pick), vt);
      llvm::Value *d = b_.CreateVectorSplat(
          lanes_, b_.CreateAnd(b_.CreateLShr(data, 8 * j), llvm::ConstantInt::get(i32, 255)));
      sum = b_.CreateAdd(sum, b_.CreateMul(w, d));
    }
    return b_.CreateSExt(sum, withLanes(b_.getInt64Ty(), sum));
  }
  // The portable form: each product and the sum in 32 bits (as the loads extend to i64 values,
  // narrowed here so that the vector code multiplies 32-bit lanes).
  llvm::Value *sum = nullptr;
  for (size_t j = 0; j < 4; ++j) {
    llvm::Value *a = convert(expr(args[j]), args[j]->dtype, kInt64),
                *w = convert(expr(args[j + 4]), args[j + 4]->dtype, kInt64);
    matchLanes(a, w);
    llvm::Value *p =
        b_.CreateMul(b_.CreateTrunc(a, withLanes(i32, a)), b_.CreateTrunc(w, withLanes(i32, w)));
    if (sum)
      matchLanes(sum, p);
    sum = sum ? b_.CreateAdd(sum, p) : p;
  }
  if (acc) {
    llvm::Value *c = b_.CreateTrunc(acc, withLanes(i32, acc));
    matchLanes(c, sum);
    sum = b_.CreateAdd(c, sum);
  }
  return b_.CreateSExt(sum, withLanes(b_.getInt64Ty(), sum));
}

// dot2(a0, a1, b0, b1) = a0·b0 + a1·b1 in float32, plus `acc`, the products of bfloat16
// operands exact. In a 16-lane loop whose lanes share two consecutive data (the input channels of
// one pixel) and read two consecutive weights each (OIHW<o>o2i: lane v's at 2v), on a CPU with
// avx512_bf16, it is one vdpbf16ps: the data pair as a 32-bit word broadcast to every lane, the
// lanes' weight pairs as one vector load; the instruction adds the second product, then the
// first, to each lane (Intel's definition), subnormals flushed. Elsewhere the same two adds in
// float32 on the widened operands.
llvm::Value *FunctionGen::dot2(const ExprNode &e, llvm::Value *acc) {
  const std::vector<Expr> &args = e.args;
  bool pairs = vecVar_ && !mask_ && lanes_ == 16 && e.dtype == kFloat32 &&
               codegenHas("avx512bf16") && consecutiveLoads(args, 0, 2, kBFloat16) &&
               consecutiveLoads(args, 2, 2, kBFloat16) && !usesVar(args[0]->args[0], vecVar_) &&
               linearCoef(foldDivMod(args[2]->args[0]), vecVar_) == std::optional<int64_t>(2);
  llvm::Type *f32 = b_.getFloatTy();
  if (pairs) {
    auto *vt = llvm::FixedVectorType::get(f32, 16);
    auto *bfs = llvm::FixedVectorType::get(b_.getBFloatTy(), 32);
    llvm::Value *sum = acc ? splat(acc, 16) : llvm::Constant::getNullValue(vt);
    llvm::Value *data = b_.CreateAlignedLoad(
        b_.getInt32Ty(), address(buffer(args[0]->name), foldDivMod(args[0]->args[0])),
        llvm::Align(2));
    llvm::Value *weights = b_.CreateAlignedLoad(
        bfs, laneZeroAddress(buffer(args[2]->name), args[2]->args[0]), llvm::Align(2));
    return b_.CreateIntrinsic(
        llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {},
        {sum, b_.CreateBitCast(b_.CreateVectorSplat(16, data), bfs), weights});
  }
  auto product = [&](size_t j) {
    llvm::Value *a = convert(expr(args[j]), args[j]->dtype, kFloat32),
                *w = convert(expr(args[j + 2]), args[j + 2]->dtype, kFloat32);
    matchLanes(a, w);
    return b_.CreateFMul(a, w);
  };
  llvm::Value *second = product(1), *first = product(0);
  matchLanes(second, first);
  if (!acc)
    return b_.CreateFAdd(second, first);
  llvm::Value *c = acc; // float32 already (binary() converts the accumulator)
  matchLanes(c, second);
  matchLanes(c, first);
  return b_.CreateFAdd(b_.CreateFAdd(c, second), first);
}

// Integer arithmetic (signed, as the loop IR's indices are); null for other operators.
llvm::Value *FunctionGen::intArith(BinOp op, llvm::Value *a, llvm::Value *c) {
  switch (op) {
  case BinOp::Add:
    return b_.CreateAdd(a, c);
  case BinOp::Sub:
    return b_.CreateSub(a, c);
  case BinOp::Mul:
    return b_.CreateMul(a, c);
  case BinOp::Div:
    return b_.CreateSDiv(a, c);
  case BinOp::Mod:
    return b_.CreateSRem(a, c);
  case BinOp::Shl:
  case BinOp::Shr: {
    // On the 64-bit value (unsigned elements are zero-extended to it); a shift by 64 or more,
    // poison in LLVM, is 0. binary() drops a left shift's bits past the element's width.
    llvm::Value *wide = b_.CreateICmpUGE(c, llvm::ConstantInt::get(c->getType(), 64));
    llvm::Value *shifted = op == BinOp::Shl ? b_.CreateShl(a, c) : b_.CreateLShr(a, c);
    return b_.CreateSelect(wide, llvm::Constant::getNullValue(a->getType()), shifted);
  }
  case BinOp::Min:
    return b_.CreateSelect(b_.CreateICmpSLT(c, a), c, a);
  case BinOp::Max:
    return b_.CreateSelect(b_.CreateICmpSLT(a, c), c, a);
  default:
    return nullptr;
  }
}

llvm::Value *FunctionGen::binary(const ExprNode &e) {
  int t = e.args[0]->dtype;
  // A sum's dot4 term takes the other term as its accumulator (vpdpbusd adds to it).
  if (e.op == BinOp::Add && !isFloat(e.dtype))
    for (size_t k = 0; k < 2; ++k)
      if (const Expr &d = e.args[k]; d->kind == ExprKind::Call && d->name == "dot4")
        return convert(dot4(*d, convert(expr(e.args[1 - k]), e.args[1 - k]->dtype, kInt64)), kInt64,
                       e.dtype);
  // ... and a dot2 term (vdpbf16ps).
  if (e.op == BinOp::Add && e.dtype == kFloat32)
    for (size_t k = 0; k < 2; ++k)
      if (const Expr &d = e.args[k]; d->kind == ExprKind::Call && d->name == "dot2")
        return dot2(*d, convert(expr(e.args[1 - k]), e.args[1 - k]->dtype, kFloat32));
  llvm::Value *a = expr(e.args[0]), *bv = convert(expr(e.args[1]), e.args[1]->dtype, t);
  a = convert(a, t, t);
  matchLanes(a, bv);
  if (e.op == BinOp::And)
    return b_.CreateAnd(a, bv);
  if (e.op == BinOp::Or)
    return b_.CreateOr(a, bv);
  if (isFloat(t)) {
    switch (e.op) {
    case BinOp::Add:
      return b_.CreateFAdd(a, bv);
    case BinOp::Sub:
      return b_.CreateFSub(a, bv);
    case BinOp::Mul:
      return b_.CreateFMul(a, bv);
    case BinOp::Div:
      return b_.CreateFDiv(a, bv);
    case BinOp::Mod:
      return b_.CreateFRem(a, bv);
    case BinOp::Min:
      return b_.CreateSelect(b_.CreateFCmpOLT(bv, a), bv, a);
    case BinOp::Max:
      return b_.CreateSelect(b_.CreateFCmpOLT(a, bv), bv, a);
    case BinOp::EQ:
      return b_.CreateFCmpOEQ(a, bv);
    case BinOp::NE:
      return b_.CreateFCmpUNE(a, bv);
    case BinOp::LT:
      return b_.CreateFCmpOLT(a, bv);
    case BinOp::LE:
      return b_.CreateFCmpOLE(a, bv);
    case BinOp::GT:
      return b_.CreateFCmpOGT(a, bv);
    case BinOp::GE:
      return b_.CreateFCmpOGE(a, bv);
    default:
      break;
    }
  } else {
    if (e.op == BinOp::Shl && dtypeBytes(e.dtype) < 8) {
      // The bits shifted past the element's width are dropped here, not only at a store: a
      // fused cast may read the value first.
      uint64_t mask = (uint64_t{1} << (8 * dtypeBytes(e.dtype))) - 1;
      return b_.CreateAnd(intArith(e.op, a, bv), llvm::ConstantInt::get(a->getType(), mask));
    }
    if (llvm::Value *v = intArith(e.op, a, bv))
      return v;
    switch (e.op) {
    case BinOp::EQ:
      return b_.CreateICmpEQ(a, bv);
    case BinOp::NE:
      return b_.CreateICmpNE(a, bv);
    case BinOp::LT:
      return b_.CreateICmpSLT(a, bv);
    case BinOp::LE:
      return b_.CreateICmpSLE(a, bv);
    case BinOp::GT:
      return b_.CreateICmpSGT(a, bv);
    case BinOp::GE:
      return b_.CreateICmpSGE(a, bv);
    default:
      break;
    }
  }
  fail("codegen ", f_.name, ": unsupported operator in ", printExpr(std::make_shared<ExprNode>(e)));
}

llvm::Value *FunctionGen::expr(const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return e->dtype == kBool ? b_.getInt1(e->intValue != 0)
                             : static_cast<llvm::Value *>(b_.getInt64(e->intValue));
  case ExprKind::FloatImm:
    return llvm::ConstantFP::get(valueType(e->dtype), roundToDType(e->floatValue, e->dtype));
  case ExprKind::Var: {
    auto it = vars_.find(e.get());
    if (it == vars_.end())
      fail("codegen ", f_.name, ": variable ", e->name, " is not bound");
    return it->second;
  }
  case ExprKind::Binary: // bfloat16 arithmetic rounds each result, as the reference does
    return e->dtype == kBFloat16 ? roundBF16(binary(*e)) : binary(*e);
  case ExprKind::Not:
    return b_.CreateNot(convert(expr(e->args[0]), e->args[0]->dtype, kBool));
  case ExprKind::Select: {
    llvm::Value *c = convert(expr(e->args[0]), e->args[0]->dtype, kBool),
                *a = convert(expr(e->args[1]), e->args[1]->dtype, e->dtype),
                *bv = convert(expr(e->args[2]), e->args[2]->dtype, e->dtype);
    // Operands as wide as the condition (a scalar condition picks whole vectors).
    matchLanes(a, bv);
    return b_.CreateSelect(c, splat(a, lanesOf(c)), splat(bv, lanesOf(c)));
  }
  case ExprKind::Cast:
    return convert(expr(e->args[0]), e->args[0]->dtype, e->dtype);
  case ExprKind::Call:
    return e->dtype == kBFloat16 ? roundBF16(call(*e)) : call(*e);
  case ExprKind::Load: {
    BufferRef buf = buffer(e->name);
    // Inside a lane-dependent if-then-else even a load the lanes share is masked: unmasked,
    // it could read out of bounds when no lane takes that side. (A guarded loop's body runs
    // only when some lane is active, so its shared loads stay scalar.)
    Expr index = foldDivMod(e->args[0]);
    llvm::Value *v = vecVar_ && (laneSelect_ > 0 || usesVar(index, vecVar_))
                         ? vectorLoad(buf, index)
                         : b_.CreateLoad(elemType(buf.dtype), address(buf, index));
    if (buf.dtype == kBFloat16)
      return widenBF16(v);
    if (!isFloat(buf.dtype) && buf.dtype != kBool)
      v = dtypeIsUnsigned(buf.dtype) ? b_.CreateZExtOrTrunc(v, withLanes(b_.getInt64Ty(), v))
                                     : b_.CreateSExtOrTrunc(v, withLanes(b_.getInt64Ty(), v));
    return v;
  }
  case ExprKind::TensorRead:
  case ExprKind::Reduce:
    fail("codegen ", f_.name, ": ", printExpr(e), " was not lowered");
  }
  return nullptr;
}

// The address of lane 0 of a vector access whose index has coefficient 1 in the lane variable.
llvm::Value *FunctionGen::laneZeroAddress(const BufferRef &buf, const Expr &index) {
  llvm::Value *saved = vars_.at(vecVar_);
  vars_[vecVar_] = b_.getInt64(0);
  llvm::Value *p = address(buf, index);
  vars_[vecVar_] = saved;
  return p;
}

// A load in a vector loop: consecutive lanes as one vector load, anything else a gather.
llvm::Value *FunctionGen::vectorLoad(const BufferRef &buf, const Expr &index) {
  llvm::Type *et = elemType(buf.dtype);
  auto *vt = llvm::FixedVectorType::get(et, lanes_);
  llvm::Align align = m_.getDataLayout().getABITypeAlign(et);
  std::optional<int64_t> k = linearCoef(index, vecVar_);
  if (k == 1)
    return mask_ ? static_cast<llvm::Value *>(
                       b_.CreateMaskedLoad(vt, laneZeroAddress(buf, index), align, mask_))
                 : b_.CreateAlignedLoad(vt, laneZeroAddress(buf, index), align);
  llvm::Value *idx = splat(narrowIndices_ ? narrowIndex(index) : expr(index), lanes_);
  llvm::Value *ptrs = b_.CreateGEP(et, buf.ptr, idx);
  return b_.CreateMaskedGather(vt, ptrs, align, mask_);
}

// A gather's lane indices in 32 bits, as TVM computes indices when shapes fit. The vector
// units divide and multiply 32-bit lanes by constants in a few instructions; 64-bit lanes
// have no high multiply, so each lane's division by a constant became scalar code (a blocked
// layout gathered back to NCHW spent most of its time there). Only used when every buffer has
// fewer than 2^30 elements: an index expression's partial results are bounded by the buffer
// it indexes (they are Horner forms of in-range coordinates).
llvm::Value *FunctionGen::narrowIndex(const Expr &e) {
  llvm::Type *i32 = b_.getInt32Ty();
  switch (e->kind) {
  case ExprKind::IntImm:
    return b_.getInt32(static_cast<uint32_t>(e->intValue));
  case ExprKind::Binary: {
    if (isFloat(e->args[0]->dtype) || isFloat(e->args[1]->dtype))
      break;
    llvm::Value *a = narrowIndex(e->args[0]), *c = narrowIndex(e->args[1]);
    matchLanes(a, c);
    if (llvm::Value *v = intArith(e->op, a, c))
      return v;
    break;
  }
  default:
    break;
  }
  llvm::Value *v = expr(e); // anything else in 64 bits, then narrowed
  return b_.CreateTrunc(v, withLanes(i32, v));
}

} // namespace loupe::backend::codegen
