// PrinterJsonTest: PrintGraphIR punctuation, the dmlc JSON layout byte for byte, JSON round
// trips and every class of malformed JSON.
#include "TestUtil.h"

#include "core/Error.h"
#include "core/Json.h"
#include "core/Printer.h"
#include "core/PyFormat.h"

using namespace loupe;
using namespace loupe::test;

namespace {
std::string loadError(const std::string &text) {
  registerAllOps();
  try {
    loadJSON(text, "g.json");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST(Printer, EmptyGraphWithAttrs) {
  // nnvm-spec §3: SaveJSON's result prints like this in seed 000.
  Graph g;
  g.attrs["json"] = GraphAttr::string("{}");
  EXPECT_EQ(printGraphIR(g), "Graph() {\n  ret \n}\ngraph_attr_keys = [json]\n");
}

TEST(Printer, MultiOutputEntriesAndHeads) {
  Graph g = built("x = Variable(\"x\")\ns = split(x, indices_or_sections=2)\ny = relu(s[1])",
                  "Group([y, s[0]])");
  EXPECT_EQ(printGraphIR(g), "Graph(%x) {\n"
                             "  %1 = split(%x, indices_or_sections='2')\n"
                             "  %2 = relu(%1.1)\n"
                             "  ret %2, %1.0\n"
                             "}");
}

TEST(Printer, JoinedAttributesAndMultiOutputValues) {
  Graph g = built("x = Variable(\"x\", shape=(4,2))\ns = split(x, indices_or_sections=2, axis=0)",
                  "s[1]");
  g = applyPasses(g, {"InferShape"});
  EXPECT_EQ(printGraphIR(g, {"shape"}),
            "Graph(%x) {\n"
            "  %x, shape=[4,2]\n"
            "  %1 = split(%x, axis='0', indices_or_sections='2'), shape=[[2,2], [2,2]]\n"
            "  ret %1.1\n"
            "}\n"
            "graph_attr_keys = [shape_num_unknown_nodes, shape]\n");
  EXPECT_THROW(printGraphIR(g, {"shape_num_unknown_nodes"}), Error);
  EXPECT_THROW(printGraphIR(g, {"nope"}), Error);
}

TEST(Printer, ControlDepsFromJson) {
  std::string json = R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
    {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]},
    {"op": "exp", "name": "e", "inputs": [[0, 0, 0]], "control_deps": [0, 1]}],
    "arg_nodes": [0], "heads": [[2, 0, 0]]})";
  registerAllOps();
  Graph g = loadJSON(json);
  EXPECT_EQ(printGraphIR(g), "Graph(%a) {\n"
                             "  %1 = relu(%a)\n"
                             "  %2 = exp(%a), control_deps=[%a, %1]\n"
                             "  ret %2\n"
                             "}");
}

TEST(Json, DmlcLayoutByteForByte) {
  // The layout rules of nnvm-spec §1.3, derived by hand for a one-conv graph with the four
  // attributes of the spec's deploy-graph example.
  Graph g = built("x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                  "y = conv2d(x, w, b, channels=3, kernel_size=(5,5))");
  g.attrs["storage_id"] = GraphAttr::listInt({1, 2, 3, 0});
  g.attrs["dtype"] = GraphAttr::listInt({0, 0, 0, 0});
  g.attrs["dltype"] = GraphAttr::listStr({"float32", "float32", "float32", "float32"});
  g.attrs["shape"] = GraphAttr::listShape({{7, 3, 11, 13}, {3, 3, 5, 5}, {3}, {7, 3, 7, 9}});
  const char *want = R"json({
  "nodes": [
    {
      "op": "null", 
      "name": "x", 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "w", 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "b", 
      "inputs": []
    }, 
    {
      "op": "conv2d", 
      "name": "conv2d0", 
      "attrs": {
        "channels": "3", 
        "kernel_size": "(5, 5)"
      }, 
      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    }
  ], 
  "arg_nodes": [0, 1, 2], 
  "node_row_ptr": [0, 1, 2, 3, 4], 
  "heads": [[3, 0, 0]], 
  "attrs": {
    "storage_id": ["list_int", [1, 2, 3, 0]], 
    "dtype": ["list_int", [0, 0, 0, 0]], 
    "dltype": ["list_str", [
        "float32", 
        "float32", 
        "float32", 
        "float32"]], 
    "shape": ["list_shape", [
        [7, 3, 11, 13], 
        [3, 3, 5, 5], 
        [3], 
        [7, 3, 7, 9]]]
  }
})json";
  EXPECT_EQ(saveJSON(g), want);
}

TEST(Json, SingleKeyMapsAndLongArrays) {
  Graph g = built("x = Variable(\"x\")\ny = dense(x, units=10)");
  g.attrs["opt_level"] = GraphAttr::integer(2);
  std::string s = saveJSON(g);
  EXPECT_NE(s.find("\"attrs\": {\"units\": \"10\"}, "), std::string::npos);
  EXPECT_NE(s.find("\"attrs\": {\"opt_level\": [\"int\", 2]}"), std::string::npos);
  // 12 entries in node_row_ptr: multi-line, one number per line.
  Graph big = built("x = Variable(\"x\")\ny = relu(relu(relu(relu(relu(relu(relu(relu(relu(relu("
                    "x))))))))))");
  EXPECT_NE(saveJSON(big).find("\"node_row_ptr\": [\n    0, \n    1, \n"), std::string::npos);
}

TEST(Json, RoundTripKeepsEverything) {
  Graph g = built("x = Variable(\"x\", shape=(1,3,8,8))\n"
                  "y = conv2d(x, channels=4, kernel_size=(3,3), padding=(1,1))\n"
                  "y = batch_norm(y)\ny = max_pool2d(relu(y), pool_size=(2,2))");
  g = applyPasses(g, {"InferShape", "InferType"});
  std::string once = saveJSON(g);
  Graph back = loadJSON(once);
  EXPECT_EQ(saveJSON(back), once);
  EXPECT_EQ(printGraphIR(back), printGraphIR(g));
  // The mutated-variable versions survive.
  EXPECT_NE(once.find("[[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]"), std::string::npos)
      << once;
}

TEST(Json, SaveRefusesOpaqueAttributes) {
  Graph g = built("x = Variable(\"x\")\ny = relu(x)");
  GraphAttr m;
  m.type = GraphAttr::Type::Opaque;
  m.str = "compiled module";
  g.attrs["module"] = m;
  EXPECT_THROW(saveJSON(g), Error);
}

TEST(Json, MalformedInputsSayWhatAndWhere) {
  EXPECT_EQ(loadError(""), "g.json: empty file, expected NNVM graph JSON");
  std::string trunc = loadError("{\n  \"nodes\": [\n    {\"op\": \"null\", ");
  EXPECT_EQ(trunc.rfind("g.json:3:", 0), 0u) << trunc;
  EXPECT_NE(trunc.find("malformed JSON"), std::string::npos);
  EXPECT_EQ(loadError("[1, 2]"),
            "g.json: expected a JSON object with 'nodes', 'arg_nodes' and 'heads'");
  EXPECT_EQ(loadError(R"({"nodes": [], "heads": []})"), "g.json: missing key 'arg_nodes'");
  EXPECT_EQ(loadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
      {"op": "conv_2d", "name": "c", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1,0,0]]})"),
            "g.json: node 1 ('c'): unknown op 'conv_2d' (did you mean 'conv2d', 'conv3d'?)");
  EXPECT_EQ(loadError(R"({"nodes": [{"op": "relu", "name": "r", "inputs": [[1, 0, 0]]},
      {"op": "null", "name": "a", "inputs": []}], "arg_nodes": [1], "heads": [[0,0,0]]})"),
            "g.json: node 0 ('r'): input refers to node 1, which does not come before it");
  EXPECT_EQ(loadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
      {"op": "dense", "name": "d", "attrs": {"units": "ten"}, "inputs": [[0,0,0],[0,0,0],[0,0,0]]}],
      "arg_nodes": [0], "heads": [[1,0,0]]})"),
            "g.json: operator d (dense): attribute 'units': expected an integer, got 'ten'");
  EXPECT_EQ(loadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}],
      "arg_nodes": [0], "heads": [[0,0,0]], "attrs": {"shape": ["list_tensor", []]}})"),
            "g.json: graph attribute 'shape': unknown type 'list_tensor'");
  EXPECT_EQ(loadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}],
      "arg_nodes": [0], "heads": [[0,0,0]], "attrs": {"shape": ["list_shape", [[1], [2]]]}})"),
            "g.json: graph attribute 'shape' has 2 values but the graph has 1 entry");
  EXPECT_EQ(loadError(R"({"nodes": [{"op": "null", "name": "a", "inputs": []}],
      "arg_nodes": [0], "heads": [[3,0,0]]})"),
            "g.json: heads refer to a missing node output [3,0,0]");
}

TEST(Json, LegacyTwoNumberEntriesAndParamKey) {
  registerAllOps();
  Graph g = loadJSON(R"({"nodes": [{"op": "null", "name": "a", "inputs": []},
      {"op": "leaky_relu", "name": "l", "param": {"alpha": "0.1"}, "inputs": [[0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0]]})");
  EXPECT_EQ(printGraphIR(g), "Graph(%a) {\n  %1 = leaky_relu(%a, alpha='0.1')\n  ret %1\n}");
}

TEST(PyFormat, MatchesPythonPprint) {
  // Expected text produced by CPython 3.11's pprint.pformat on the same value.
  PyValue v = PyValue::list(
      {PyValue::dictOf({{"op", PyValue::s("null")},
                        {"name", PyValue::s("a_rather_long_variable_name_here")},
                        {"attrs", PyValue::dictOf({{"shape", PyValue::s("(1, 2, 3)")},
                                                   {"dtype", PyValue::s("0")}})},
                        {"inputs", PyValue::list()}}),
       PyValue::dictOf({{"op", PyValue::s("it's")}, {"inputs", PyValue::list({PyValue::i(1)})}})});
  EXPECT_EQ(pyPformat(v), "[{'attrs': {'dtype': '0', 'shape': '(1, 2, 3)'},\n"
                          "  'inputs': [],\n"
                          "  'name': 'a_rather_long_variable_name_here',\n"
                          "  'op': 'null'},\n"
                          " {'inputs': [1], 'op': \"it's\"}]");
  EXPECT_EQ(pyRepr(v.items[1]), "{'op': \"it's\", 'inputs': [1]}");
}

namespace {

// NNVM read a node's attributes into its hash map in the order of the file (dmlc's JSON reader),
// so a graph written by hand with its attributes unsorted prints them as that order filled the
// map; SaveJSON writes them sorted again.
TEST(Printer, AttributesLoadedFromJsonPrintAsTheFilesOrderFilledTheMap) {
  registerAllOps();
  auto withAttrs = [](const std::string &attrs) {
    return "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
           " {\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
           " {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
           " {\"op\": \"conv2d\", \"name\": \"c\", \"attrs\": {" +
           attrs +
           "}, \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}], \"arg_nodes\": [0, 1, 2],"
           " \"node_row_ptr\": [0, 1, 2, 3, 4], \"heads\": [[3, 0, 0]]}";
  };
  // Sorted, as SaveJSON writes: channels, kernel_size, padding go in in that order.
  std::string sorted = printGraphIR(loadJSON(
      withAttrs("\"channels\": \"3\", \"kernel_size\": \"(5, 5)\", \"padding\": \"[2, 2]\"")));
  EXPECT_NE(sorted.find("conv2d(%x, %w, %b, channels='3', padding='[2, 2]', kernel_size='(5, 5)')"),
            std::string::npos)
      << sorted;
  // kernel_size, padding, channels: the first two swap when the map grows from 3 buckets to 7
  // (where they share one), and channels goes in front of them.
  std::string byHand = printGraphIR(loadJSON(
      withAttrs("\"kernel_size\": \"(5, 5)\", \"padding\": \"[2, 2]\", \"channels\": \"3\"")));
  EXPECT_NE(byHand.find("conv2d(%x, %w, %b, channels='3', kernel_size='(5, 5)', padding='[2, 2]')"),
            std::string::npos)
      << byHand;
  EXPECT_NE(
      saveJSON(loadJSON(withAttrs(
                   "\"kernel_size\": \"(5, 5)\", \"padding\": \"[2, 2]\", \"channels\": \"3\"")))
          .find("\"channels\": \"3\", \n        \"kernel_size\""),
      std::string::npos);
}

} // namespace
