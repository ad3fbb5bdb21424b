// Transformer: BERT-base (HuggingFace BertModel) and ViT-B/16 (torchvision vit_b_16) — encoder
// layers of multi-head self-attention and a gelu MLP, built from dense, batch_matmul, softmax,
// layer_norm and gelu, with the originals' parameter shapes and (dots as underscores) names.
#include "repl/models/Zoo.h"

#include "core/DType.h"
#include "core/Error.h"

namespace loupe::models {

namespace {

constexpr int64_t kHidden = 768, kHeads = 12, kHeadDim = 64, kMlp = 3072, kLayers = 12;

std::string str(int64_t v) { return std::to_string(v); }

std::string tuple(const Shape &s) { return shapeToTuple(s); }

// (B, S, heads * dim) as (B, heads, S, dim).
std::string splitHeads(NetWriter &w, const std::string &x, int64_t batch, int64_t seq) {
  std::string r = w.let("reshape(" + x + ", shape=" + tuple({batch, seq, kHeads, kHeadDim}) + ")");
  return w.let("transpose(" + r + ", axes=(0, 2, 1, 3))");
}

// softmax(q k^T / sqrt(dim)) v over (B, heads, S, dim), back to (B, S, heads * dim).
std::string attend(NetWriter &w, const std::string &q, const std::string &k, const std::string &v,
                   int64_t batch, int64_t seq) {
  std::string scores = w.let("batch_matmul(" + q + ", " + k + ", transpose_b=True) * 0.125");
  std::string p = w.let("softmax(" + scores + ", axis=-1)");
  std::string ctx = w.let("transpose(batch_matmul(" + p + ", " + v + "), axes=(0, 2, 1, 3))");
  return w.let("reshape(" + ctx + ", shape=" + tuple({batch, seq, kHidden}) + ")");
}

std::string layerNorm(NetWriter &w, const std::string &x, const std::string &name, double eps) {
  return w.let("layer_norm(" + x + ", epsilon=" + number(eps) + ", name=\"" + name + "\")[0]");
}

// The first token of each sequence, (B, S, C) -> (B, C).
std::string firstToken(NetWriter &w, const std::string &x, int64_t batch) {
  std::string s =
      w.let("strided_slice(" + x + ", begin=(0, 0, 0), end=" + tuple({batch, 1, kHidden}) + ")");
  return w.let("reshape(" + s + ", shape=" + tuple({batch, kHidden}) + ")");
}

// BertModel: word, position and token-type embeddings (every token of segment 0, positions
// 0..S-1), layer norm, twelve post-norm encoder layers, and the pooler (dense + tanh on the first
// token), which is the output.
std::string bert(const Options &o) {
  NetWriter w;
  int64_t batch = o.batch, seq = o.sample[0];
  if (seq < 1 || seq > 512)
    fail("bert-base takes 1 to 512 tokens (its position embeddings), got ", seq);
  std::string ids = w.variable("data", {batch, seq}, kInt64);
  std::string words = w.variable("embeddings_word_embeddings_weight", {30522, kHidden}, o.dtype);
  std::string positions =
      w.variable("embeddings_position_embeddings_weight", {512, kHidden}, o.dtype);
  std::string types = w.variable("embeddings_token_type_embeddings_weight", {2, kHidden}, o.dtype);
  std::string x = w.let("take(" + words + ", " + ids + ", axis=0)");
  x = w.let("broadcast_add(" + x + ", strided_slice(" + positions +
            ", begin=(0, 0), end=" + tuple({seq, kHidden}) + "))");
  x = w.let("broadcast_add(" + x + ", strided_slice(" + types + ", begin=(0, 0), end=(1, " +
            str(kHidden) + ")))");
  x = layerNorm(w, x, "embeddings_LayerNorm", 1e-12);
  for (int64_t l = 0; l < kLayers; ++l) {
    std::string p = "encoder_layer_" + str(l) + "_";
    auto heads = [&](const char *what) {
      return splitHeads(w, w.let(dense(x, p + "attention_self_" + what, kHidden)), batch, seq);
    };
    std::string q = heads("query"), k = heads("key"), v = heads("value");
    std::string a = attend(w, q, k, v, batch, seq);
    a = w.let(dense(a, p + "attention_output_dense", kHidden));
    x = layerNorm(w, w.let(x + " + " + a), p + "attention_output_LayerNorm", 1e-12);
    std::string h = w.let("gelu(" + w.let(dense(x, p + "intermediate_dense", kMlp)) + ")");
    h = w.let(dense(h, p + "output_dense", kHidden));
    x = layerNorm(w, w.let(x + " + " + h), p + "output_LayerNorm", 1e-12);
  }
  std::string pooled = w.let(dense(firstToken(w, x, batch), "pooler_dense", kHidden));
  return w.finish(w.let(unary("tanh", pooled, "pooler_activation")));
}

// vit_b_16: 16x16 patches embedded by a strided convolution, the class token in front, position
// embeddings, twelve pre-norm encoder layers (one in_proj dense for query, key and value), the
// final layer norm and the head on the class token, then softmax as the zoo's classifiers end.
std::string vit(const Options &o) {
  NetWriter w;
  int64_t batch = o.batch;
  std::string x = w.input(o);
  int64_t patches = (o.sample[1] / 16) * (o.sample[2] / 16), seq = patches + 1;
  x = w.let(conv(x, "conv_proj", kHidden, 16, 16, 0, true));
  x = w.let("reshape(" + x + ", shape=" + tuple({batch, kHidden, patches}) + ")");
  x = w.let("transpose(" + x + ", axes=(0, 2, 1))");
  std::string cls = w.variable("class_token", {1, 1, kHidden}, o.dtype);
  if (batch > 1)
    cls = w.let("broadcast_to(" + cls + ", shape=" + tuple({batch, 1, kHidden}) + ")");
  x = w.let("concatenate(" + cls + ", " + x + ", axis=1)");
  std::string pos = w.variable("encoder_pos_embedding", {1, seq, kHidden}, o.dtype);
  x = w.let("broadcast_add(" + x + ", " + pos + ")");
  for (int64_t l = 0; l < kLayers; ++l) {
    std::string p = "encoder_layers_encoder_layer_" + str(l) + "_";
    std::string h = layerNorm(w, x, p + "ln_1", 1e-6);
    std::string qkv = w.let(dense(h, p + "self_attention_in_proj", 3 * kHidden));
    qkv = w.let("reshape(" + qkv + ", shape=" + tuple({batch, seq, 3, kHeads, kHeadDim}) + ")");
    qkv = w.let("transpose(" + qkv + ", axes=(2, 0, 3, 1, 4))");
    auto part = [&](int64_t i) {
      std::string s = w.let("strided_slice(" + qkv + ", begin=" + tuple({i, 0, 0, 0, 0}) +
                            ", end=" + tuple({i + 1, batch, kHeads, seq, kHeadDim}) + ")");
      return w.let("reshape(" + s + ", shape=" + tuple({batch, kHeads, seq, kHeadDim}) + ")");
    };
    std::string q = part(0), k = part(1), v = part(2);
    std::string a = attend(w, q, k, v, batch, seq);
    x = w.let(x + " + " + w.let(dense(a, p + "self_attention_out_proj", kHidden)));
    h = layerNorm(w, x, p + "ln_2", 1e-6);
    h = w.let("gelu(" + w.let(dense(h, p + "mlp_0", kMlp)) + ")");
    x = w.let(x + " + " + w.let(dense(h, p + "mlp_3", kHidden)));
  }
  x = layerNorm(w, x, "encoder_ln", 1e-6);
  std::string logits = w.let(dense(firstToken(w, x, batch), "heads_head", o.classes));
  return w.finish(w.let(unary("softmax", logits, "softmax")));
}

} // namespace

void addTransformers(std::vector<Network> &z) {
  z.push_back({"bert-base",
               "BERT-base encoder (12 layers, 768 wide, 12 heads; ids in, pooler output out)",
               {128},
               0,
               bert});
  z.push_back({"vit-b16",
               "ViT-B/16 (16x16 patches, 12 pre-norm encoder layers, torchvision vit_b_16)",
               {3, 224, 224},
               1000,
               vit});
}

} // namespace loupe::models
