// SymbolsTest: binding a symbolic graph's size symbols from its inputs, and the graph bound.
#include "TestUtil.h"

#include "passes/Symbols.h"

using namespace loupe;
using namespace loupe::test;

namespace {

Graph twoInputs() {
  return built("x = Variable(\"x\", shape=\"(batch, seq, 8)\")\n"
               "m = Variable(\"m\", shape=\"(batch, 1, seq)\")\n"
               "r = reshape(x, shape=\"(seq, batch, 8)\")\n"
               "y = broadcast_add(transpose(r, axes=(1, 0, 2)), batch_matmul(m, x))\n",
               "y");
}

std::string bindError(const Graph &g, const std::map<std::string, Shape> &given,
                      const SymBindings &words = {}) {
  try {
    bindInputs(g, given, words);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Symbols, InputsBindTheirSymbols) {
  Engine registers;
  Graph g = twoInputs();
  EXPECT_EQ(graphSymbols(g), (std::set<std::string>{"batch", "seq"}));
  EXPECT_EQ(shapeToTuple(symbolicInputs(g).at("m")), "(batch, 1, seq)");
  SymBindings b = bindInputs(g, {{"x", Shape{2, 5, 8}}, {"m", Shape{2, 1, 5}}});
  EXPECT_EQ(b, (SymBindings{{"batch", 2}, {"seq", 5}}));
  EXPECT_EQ(bindingsText(b), "batch=2, seq=5");
  // A size by name binds a symbol no input gives; `keep` fills what neither gives.
  EXPECT_EQ(bindInputs(g, {}, {{"batch", 3}}, {{"seq", 7}}),
            (SymBindings{{"batch", 3}, {"seq", 7}}));
}

TEST(Symbols, DisagreeingInputsAreOneLineNamingBoth) {
  Engine registers;
  Graph g = twoInputs();
  EXPECT_EQ(bindError(g, {{"x", Shape{2, 5, 8}}, {"m", Shape{2, 1, 6}}}),
            "input x gives seq=5 (dimension 1 of (2, 5, 8)), but input m gives seq=6");
  EXPECT_EQ(bindError(g, {{"x", Shape{2, 5, 8}}}, {{"seq", 4}}),
            "input x gives seq=5 (dimension 1 of (2, 5, 8)), but seq=4 was given");
  EXPECT_EQ(bindError(g, {{"x", Shape{2, 5, 9}}}),
            "input x has shape (2, 5, 9), but the graph takes (batch, seq, 8) = (2, 5, 8) at "
            "batch=2, seq=5");
  EXPECT_EQ(bindError(g, {{"x", Shape{2, 5}}}),
            "input x has shape (2, 5), rank 2, but the graph takes (batch, seq, 8)");
  EXPECT_EQ(bindError(g, {{"m", Shape{2, 1, 5}}}, {{"len", 3}}),
            "'len' is no size symbol of the graph (its symbols: batch, seq)");
  EXPECT_EQ(bindError(g, {{"m", Shape{2, 1, 5}}}, {{"batch", 0}}),
            "batch=0: a size is a positive integer");
  EXPECT_EQ(bindError(g, {}), "size symbol batch is not bound: give an input of that size or "
                              "batch=N");
}

// The bound graph is the graph of those sizes: its variables' shapes and reshape's target.
TEST(Symbols, BindingReplacesSymbolsInShapesAndSizeAttributes) {
  Engine registers;
  Graph g = bindSymbols(twoInputs(), {{"batch", 2}, {"seq", 5}});
  EXPECT_TRUE(graphSymbols(g).empty());
  Graph shaped = applyPasses(g, {"InferShape"});
  const IndexedGraph &idx = shaped.index();
  EXPECT_EQ(shaped.attr("shape")->shapes[idx.entryId(idx.heads[0])], (Shape{2, 5, 8}));
  bool reshaped = false;
  for (const auto &n : idx.nodes)
    if (!n.node->isVariable() && n.node->op->name == "reshape") {
      EXPECT_EQ(*findAttr(n.node->attrs, "shape"), "(5, 2, 8)");
      reshaped = true;
    }
  EXPECT_TRUE(reshaped);
  // The symbolic graph itself is unchanged.
  EXPECT_EQ(graphSymbols(twoInputs()), (std::set<std::string>{"batch", "seq"}));
}

TEST(Symbols, BindingsTextReadsBackAndMalformedTextIsOneLine) {
  SymBindings b = {{"batch", 4}, {"seq", 128}};
  EXPECT_EQ(parseBindings(bindingsText(b)), b);
  EXPECT_EQ(parseBindings("seq=7"), (SymBindings{{"seq", 7}}));
  // A tuning log is a file users share: its text never crashes the reader.
  for (const char *bad : {"", "seq", "seq=", "=4", "seq=x", "seq=-1", "seq=0", "seq=4, seq=5",
                          "seq=99999999999999999999", "seq=4,", " , "}) {
    try {
      parseBindings(bad);
      ADD_FAILURE() << "read '" << bad << "'";
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("'") + bad + "' is not sizes such as 'batch=1, seq=64'");
    }
  }
}
