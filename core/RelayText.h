// RelayText: a graph printed as a Relay module in Relay's text form (relay-spec §5) — the
// workbench's graph as seed 003's `print(mod)` shows a Relay program, FuseOps groups as
// `fn (…, Primitive=1)` literals.
#pragma once

#include "core/Graph.h"
#include "core/Shape.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace loupe {

/// `g` as Relay prints `def @main(…) -> T { … }`: graph inputs become @main's parameters
/// (annotated with their declared types), NNVM ops their Relay counterparts (broadcast_add as
/// `add`, conv2d as `nn.conv2d`, a scalar op with its scalar as a literal such as `2f`, a bias
/// as `nn.bias_add`; an op without one keeps its NNVM name), constants `meta[relay.Constant][i]`,
/// every call bound to a temporary `%N` but the last (deepest first, as TVM's printer does), and
/// `/* ty=… */` comments once shapes and types are inferred. When the graph carries a partition
/// (group_root, as FuseOps writes it), each group of ops is a primitive function literal called
/// with its inputs, its parameters named p0, p1, … made unique as Relay's printer does.
std::string printRelay(const Graph &g);

/// A variable's type as Relay declares it: its `shape` attribute (none without one) and the dtype
/// its `dtype` type code names (float32 when it has none; InferType refuses any other text).
struct DeclaredType {
  std::optional<Shape> shape;
  std::string dtype = "float32";
};
DeclaredType declaredType(const Node &variable);

/// NNVM's ops that Relay names otherwise: broadcast_add → add, relu → nn.relu, …
const std::map<std::string, std::string> &relayOpNames();

/// NNVM's scalar ops (__mul_scalar__, …): the Relay op each is with a scalar constant argument,
/// and whether that constant is the first argument (__rsub_scalar__: subtract(s, x)).
const std::map<std::string, std::pair<std::string, bool>> &relayScalarOps();

} // namespace loupe
