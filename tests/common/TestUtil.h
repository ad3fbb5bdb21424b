// TestUtil: small helpers shared by the unit tests — build graphs in the graph language,
// infer them, and evaluate them with the reference interpreter.
#pragma once

#include "core/Error.h"
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "passes/Pass.h"
#include "repl/Engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

namespace loupe {
/// Shapes in test failures: "(2, 3)", "()" for a scalar, "unknown" for an unknown shape.
inline void PrintTo(const Shape &s, std::ostream *os) {
  *os << (s.rankKnown() ? shapeToTuple(s) : std::string("unknown"));
}
} // namespace loupe

namespace loupe::test {

/// A fresh, empty folder `<tmp>/<prefix>-<pid>/<name>` (removed first, made again): each test
/// process writes its own.
inline std::filesystem::path freshFolder(const std::string &prefix, const std::string &name) {
  std::filesystem::path p =
      std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

/// Runs `f`, which must throw loupe::Error with exactly `message`.
template <typename F> void expectError(F f, const std::string &message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error &e) {
    EXPECT_EQ(e.what(), message);
  }
}

/// Runs each line of `program` in `e`; fails the test on any error.
inline void run(Engine &e, const std::string &program) {
  std::istringstream in(program);
  std::string line;
  while (std::getline(in, line)) {
    std::ostringstream out, err;
    ASSERT_TRUE(e.execute(line, out, err)) << line << "\n" << err.str();
  }
}

/// Runs one input and returns what it printed (output and errors together).
inline std::string output(Engine &e, const std::string &input) {
  std::ostringstream out;
  e.execute(input, out, out);
  return out.str();
}

/// A graph-language line declaring variable `name` of `shape` ("(2,3)", "()").
inline std::string var(const std::string &name, const std::string &shape) {
  return name + " = Variable(\"" + name + "\", shape=" + shape + ")\n";
}

/// A graph-language line declaring variable `name` of a shape that may name size symbols
/// ("(batch, seq, 16)": the shape is quoted text).
inline std::string symVar(const std::string &name, const std::string &shape) {
  return var(name, "\"" + shape + "\"");
}

/// Checks a PlanMemory plan: no two op outputs live at once share a storage id, unless the later
/// writes in place over the earlier at its last read (heads live to the end). `where` names the
/// case in failures.
inline void expectNoLiveSharing(const Graph &plan, const std::string &where) {
  const IndexedGraph &idx = plan.index();
  const auto &sid = plan.attr("storage_id")->ints;
  const auto &inplace = plan.attr("storage_inplace_index")->ints;
  // Live range of each op output: [producer, last reader].
  std::vector<int> def(idx.numEntries(), -1), last(idx.numEntries(), -1);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    for (uint32_t k = 0; k < idx.nodes[nid].node->numOutputs(); ++k)
      def[idx.entryId(nid, k)] = last[idx.entryId(nid, k)] = static_cast<int>(nid);
    for (const auto &e : idx.nodes[nid].inputs)
      last[idx.entryId(e)] = static_cast<int>(nid);
  }
  for (const auto &h : idx.heads)
    last[idx.entryId(h)] = static_cast<int>(idx.numNodes());
  for (uint32_t a = 0; a < idx.numEntries(); ++a)
    for (uint32_t b = a + 1; b < idx.numEntries(); ++b) {
      if (sid[a] < 0 || sid[a] != sid[b])
        continue;
      // b was defined after a; it may start where a ends only by writing in place.
      bool touches = last[a] == def[b] && inplace[b] >= 0;
      EXPECT_TRUE(last[a] < def[b] || touches)
          << where << ": entries " << a << " and " << b << " share block " << sid[a]
          << " while both are live";
    }
}

/// Builds `program` and returns symbol `out` as a graph (nothing inferred).
inline Graph built(const std::string &program, const std::string &out = "y") {
  Engine e;
  run(e, program);
  run(e, ":graph " + out);
  return e.current()->graph;
}

/// Builds `program`, makes symbol `out` the graph and applies InferShape and InferType.
inline Graph inferred(const std::string &program, const std::string &out = "y") {
  return applyPasses(built(program, out), {"InferShape", "InferType"});
}

/// The inferred shape of the graph's first output.
inline Shape outShape(const std::string &program, const std::string &out = "y") {
  Graph g = inferred(program, out);
  const IndexedGraph &idx = g.index();
  return g.attr("shape")->shapes[idx.entryId(idx.heads[0])];
}

/// The message of the error that building and inferring `program` raises ("" if none).
inline std::string inferError(const std::string &program, const std::string &out = "y") {
  Engine e;
  std::istringstream in(program);
  std::string line;
  while (std::getline(in, line)) {
    std::ostringstream o;
    if (!e.execute(line, o, o))
      return o.str();
  }
  std::ostringstream o;
  if (!e.execute(":graph " + out, o, o) || !e.execute(":apply InferShape InferType", o, o))
    return o.str();
  return "";
}

/// Gives every variable the shape and dtype of its tensor in `inputs` (as build does through
/// shape_inputs/dtype_inputs), then applies InferShape and InferType.
inline Graph withInputs(Graph g, const std::map<std::string, Tensor> &inputs) {
  const IndexedGraph &idx = g.index();
  std::vector<Shape> shapes;
  std::vector<int64_t> dtypes;
  for (uint32_t nid : idx.argNodes) {
    auto it = inputs.find(idx.nodes[nid].node->name);
    shapes.push_back(it == inputs.end() ? Shape{} : it->second.shape);
    dtypes.push_back(it == inputs.end() ? -1 : it->second.dtype);
  }
  g.attrs["shape_inputs"] = GraphAttr::listShape(shapes);
  g.attrs["dtype_inputs"] = GraphAttr::listInt(dtypes);
  return applyPasses(g, {"InferShape", "InferType"});
}

/// A float32 tensor from a shape and values.
inline Tensor tensor(Shape s, std::vector<double> v, int dtype = kFloat32) {
  Tensor t(std::move(s), dtype);
  t.data = std::move(v);
  return t;
}

/// A small tensor of each width of element, with the values at its ends (a scalar and an empty
/// one among them): what a round trip through typed bytes must give back exactly.
inline std::vector<Tensor> tensorsOfEveryWidth() {
  return {
      tensor({2, 2}, {0.1f, -3.5f, 1e30f, 0}, kFloat32),
      tensor({3}, {0.1, -1e300, 5e-324}, kFloat64),
      tensor({2}, {0.5, -2048}, kFloat16),
      tensor({3}, {1.0078125, -0x1.fep127, 0x1p-133}, kBFloat16),
      tensor({2}, {-9007199254740991.0, 42}, kInt64),
      tensor({3}, {-128, 127, 0}, kInt8),
      tensor({2}, {255, 1}, kUint8),
      tensor({1}, {1}, kBoolean),
      tensor(Shape::scalar(), {-7}, kInt32),
      Tensor({0, 4}, kFloat32),
  };
}

/// Builds `program`, gives its variables the inputs' shapes and dtypes (as build does through
/// shape_inputs/dtype_inputs), infers, then evaluates output 0 with the reference interpreter.
inline Tensor eval(const std::string &program, const std::map<std::string, Tensor> &inputs,
                   const std::string &out = "y") {
  Engine e;
  run(e, program);
  run(e, ":graph " + out);
  return interpret(withInputs(e.current()->graph, inputs), inputs).at(0);
}

} // namespace loupe::test
