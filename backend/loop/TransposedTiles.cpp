// TransposedTiles: finds square tiles of strided vector copies (see TransposedTiles.h).
#include "backend/loop/TransposedTiles.h"

namespace loupe::loop {

namespace {

// One statement of a tile: its copy, with the indices at lane 0.
struct LaneCopy {
  std::string src, dst;
  int dtype = 0;
  int64_t lanes = 0, stride = 0;
  Expr in, out;
};

std::optional<LaneCopy> laneCopy(const Stmt &s) {
  int64_t lo = 0, n = 0;
  if (s->kind != StmtKind::For || s->forKind != ForKind::Vectorized || !constValue(s->a, &lo) ||
      lo != 0 || !constValue(s->b, &n) || s->body.size() != 1)
    return std::nullopt;
  const Stmt &st = s->body[0];
  if (st->kind != StmtKind::Store || st->b->kind != ExprKind::Load)
    return std::nullopt;
  const ExprNode *v = s->var.get();
  Expr out = foldDivMod(st->a), in = foldDivMod(st->b->args[0]);
  std::optional<int64_t> outStep = linearCoef(out, v), inStep = linearCoef(in, v);
  if (outStep != std::optional<int64_t>(1) || !inStep)
    return std::nullopt;
  Expr zero = intImm(0);
  return LaneCopy{st->b->name,
                  st->name,
                  st->b->dtype,
                  n,
                  *inStep,
                  substitute(in, {{v, zero}}),
                  substitute(out, {{v, zero}})};
}

} // namespace

std::optional<TransposedTile> matchTransposedTile(const std::vector<Stmt> &body, size_t first) {
  if (first >= body.size())
    return std::nullopt;
  std::optional<LaneCopy> head = laneCopy(body[first]);
  if (!head || (head->lanes != 4 && head->lanes != 8 && head->lanes != 16) ||
      head->stride < head->lanes || head->src == head->dst ||
      first + static_cast<size_t>(head->lanes) > body.size())
    return std::nullopt;
  auto [terms, offset] = splitConstant(head->in);
  TransposedTile t;
  t.lanes = head->lanes;
  t.rowStride = head->stride;
  t.src = head->src;
  t.dst = head->dst;
  t.dtype = head->dtype;
  t.firstRow = head->in;
  for (int64_t c = 0; c < t.lanes; ++c) {
    const Stmt &s = body[first + static_cast<size_t>(c)];
    std::optional<LaneCopy> copy = c == 0 ? head : laneCopy(s);
    if (!copy || copy->lanes != t.lanes || copy->stride != t.rowStride || copy->src != t.src ||
        copy->dst != t.dst || copy->dtype != t.dtype)
      return std::nullopt;
    // Statement c reads the column c to the right of the first one.
    auto [cTerms, cOffset] = splitConstant(copy->in);
    if (!sameExpr(cTerms, terms) || cOffset != offset + c)
      return std::nullopt;
    t.columnStarts.push_back(copy->out);
    t.at.push_back(s.get());
  }
  return t;
}

} // namespace loupe::loop
