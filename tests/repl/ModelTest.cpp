// ModelTest: the model zoo's networks have the published parameter counts (so the layers are
// the originals'), build and run, and `:model` refuses bad requests with nothing changed.
#include "TestUtil.h"

#include "repl/models/Random.h"
#include "repl/models/Zoo.h"

#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

// The values :model reports ("… 52 params holding 1248424 values)").
int64_t valuesOf(const std::string &modelCommand) {
  Engine e;
  std::string out = output(e, modelCommand);
  size_t at = out.find(" holding ");
  EXPECT_NE(at, std::string::npos) << out;
  return at == std::string::npos ? -1 : std::stoll(out.substr(at + 9));
}

} // namespace

TEST(Models, ParameterCountsMatchThePublishedNetworks) {
  // torchvision's squeezenet1_0 / 1_1 (no batch norm, so the counts agree exactly).
  EXPECT_EQ(valuesOf(":model squeezenet1.0"), 1248424);
  EXPECT_EQ(valuesOf(":model squeezenet1.1"), 1235496);
  // 784*128 + 128 + 128*64 + 64 + 64*10 + 10.
  EXPECT_EQ(valuesOf(":model mlp"), 109386);
  // Keras MobileNet (alpha 1, 224): 4,253,864 including batch norm's moving statistics.
  EXPECT_EQ(valuesOf(":model mobilenet"), 4253864);
  // torchvision resnet18: 11,689,512, plus 2 x 4,800 moving statistics of its batch norms.
  EXPECT_EQ(valuesOf(":model resnet-18_v1"), 11699112);
  // By hand: dense 100 -> 16384, transposed convolutions 1024->512->256->128->3 (4x4), batch
  // norms over 512, 256, 128 channels (4 values each).
  EXPECT_EQ(valuesOf(":model dcgan"),
            1638400 + 8388608 + 2048 + 2097152 + 1024 + 524288 + 512 + 6144);
  // Keras DenseNet121 / 169 / 201 (same layers, batch norms with scale and moving statistics):
  // 8,062,504 / 14,307,880 / 20,242,984.
  EXPECT_EQ(valuesOf(":model densenet-121"), 8062504);
  EXPECT_EQ(valuesOf(":model densenet-169"), 14307880);
  EXPECT_EQ(valuesOf(":model densenet-201"), 20242984);
  // Keras InceptionV3: 23,851,784 with batch norms without scale; NNVM's have gamma too, one
  // per channel of its 94 batch norms (17,216 in all, half the 34,432 moving statistics).
  EXPECT_EQ(valuesOf(":model inception-v3"), 23851784 + 17216);
  // VGG-11's convolutions (9,220,480) and, on 32x32 images, dense 512->4096->4096->10.
  EXPECT_EQ(valuesOf(":model vgg-11 shape=(3, 32, 32) classes=10"),
            9220480 + 2101248 + 16781312 + 40970);
  // HuggingFace BertModel (bert-base-uncased) with its pooler: 109,482,240. By hand: embeddings
  // 30522x768 + 512x768 + 2x768 + layer norm 2x768; per layer query, key, value and output
  // 4 x (768x768 + 768), feed-forward 768x3072 + 3072 + 3072x768 + 768, two layer norms
  // 2 x 2 x 768 (7,087,872); pooler 768x768 + 768.
  EXPECT_EQ(valuesOf(":model bert-base"), 23837184 + 12 * 7087872 + 590592);
  EXPECT_EQ(23837184 + 12 * 7087872 + 590592, 109482240);
  // torchvision vit_b_16 with its 1000-class head: 86,567,656. By hand: patch convolution
  // 768x3x16x16 + 768, class token 768, position embeddings 197x768, 12 layers as BERT's
  // (in_proj 768x2304 + 2304 holds query, key and value), final layer norm 2x768, head
  // 768x1000 + 1000.
  EXPECT_EQ(valuesOf(":model vit-b16"), 590592 + 768 + 151296 + 12 * 7087872 + 1536 + 769000);
  EXPECT_EQ(590592 + 768 + 151296 + 12 * 7087872 + 1536 + 769000, 86567656);
  // PyTorch's word_language_model at 10000 words, 200 wide, 2 LSTM layers: embedding
  // 10000x200; per layer weight_ih 800x200 (four gates), weight_hh 800x200, two biases of 800;
  // decoder 200x10000 + 10000.
  EXPECT_EQ(valuesOf(":model lstm-lm"), 2000000 + 2 * (160000 + 160000 + 1600) + 2010000);
  // The tagger: embedding 20000x100; per direction weight_ih 384x100 (three gates of 128),
  // weight_hh 384x128, two biases of 384; hidden2tag 256x17 + 17.
  EXPECT_EQ(valuesOf(":model gru-tagger"), 2000000 + 2 * (38400 + 49152 + 768) + 4369);
}

// The transformers and recurrent networks at small sizes (2 tokens; 32x32 images, 4 patches; 3
// and 4 time steps) built at opt levels 0, 2 and 3 give the reference interpreter's numbers
// (:run compares them).
TEST(Models, SequenceNetworksBuildAtEveryOptLevelAndMatchTheReference) {
  for (const char *model : {"bert-base shape=(2,)", "vit-b16 shape=(3, 32, 32)",
                            "lstm-lm shape=(3,) batch=2", "gru-tagger shape=(4,) batch=2"}) {
    Engine e;
    run(e, std::string(":model ") + model);
    for (int opt : {0, 2, 3}) {
      SCOPED_TRACE(std::string(model) + " opt_level " + std::to_string(opt));
      std::string built = output(e, ":build opt_level=" + std::to_string(opt));
      ASSERT_EQ(built.find("error"), std::string::npos) << built;
      std::string ran = output(e, ":run");
      size_t at = ran.find("max abs error ");
      ASSERT_NE(at, std::string::npos) << ran;
      EXPECT_LT(std::stod(ran.substr(at + 14)), 1e-4) << ran;
      run(e, ":undo");
    }
  }
}

TEST(Models, EveryNetworkInfersShapesAndSmallOnesRun) {
  for (const models::Network &n : models::zoo()) {
    SCOPED_TRACE(n.name);
    Engine e;
    // Small images keep the test quick; every network accepts 64x64 (dcgan takes a code).
    std::string cmd = ":model " + n.name;
    // Networks whose last pooling has a fixed window keep their own image size.
    bool fixedSize = n.name.rfind("squeezenet", 0) == 0 || n.name.rfind("densenet", 0) == 0 ||
                     n.name == "inception-v3";
    if (n.sample.size() == 3 && !fixedSize)
      cmd += " shape=(3, 64, 64)";
    run(e, cmd);
    run(e, ":apply InferShape InferType");
    EXPECT_EQ(e.current()->graph.attr("shape_num_unknown_nodes")->num, 0);
  }
  Engine e;
  run(e, ":model mlp batch=2 dtype=float64");
  run(e, ":build");
  std::string ran = output(e, ":run");
  EXPECT_NE(ran.find("output 0: shape (2, 10) float64"), std::string::npos) << ran;
  EXPECT_NE(ran.find("max abs error 0.0e+00"), std::string::npos) << ran;
}

TEST(Models, BadRequestsAreRefusedWithNothingChanged) {
  Engine e;
  run(e, ":model mlp");
  size_t steps = e.history().size();
  EXPECT_EQ(output(e, ":model resnet-19"),
            "error: unknown model 'resnet-19'; models: mlp, "
            "resnet-18_v1, resnet-34_v1, resnet-50_v1, resnet-18_v2, resnet-34_v2, resnet-50_v2, "
            "squeezenet1.0, squeezenet1.1, mobilenet, vgg-11, vgg-13, vgg-16, vgg-19, dcgan, "
            "densenet-121, densenet-161, densenet-169, densenet-201, inception-v3, bert-base, "
            "vit-b16, lstm-lm, gru-tagger\n");
  EXPECT_EQ(output(e, ":model squeezenet1.2"),
            "error: unknown model 'squeezenet1.2' (did you mean 'squeezenet1.0', "
            "'squeezenet1.1'?); models: "
            "mlp, "
            "resnet-18_v1, resnet-34_v1, resnet-50_v1, resnet-18_v2, resnet-34_v2, resnet-50_v2, "
            "squeezenet1.0, squeezenet1.1, mobilenet, vgg-11, vgg-13, vgg-16, vgg-19, dcgan, "
            "densenet-121, densenet-161, densenet-169, densenet-201, inception-v3, bert-base, "
            "vit-b16, lstm-lm, gru-tagger\n");
  EXPECT_EQ(output(e, ":model lstm-lm shape=(600,)"),
            "error: lstm-lm takes 1 to 512 time steps, got 600\n");
  EXPECT_EQ(output(e, ":model mlp batch=0"), "error: batch must be a positive integer, got '0'\n");
  EXPECT_EQ(output(e, ":model mlp colour=red"),
            "error: unknown option 'colour'; usage: :model NAME [batch=N] [shape=(C, H, W)] "
            "[classes=N] [dtype=TYPE] [seed=N]\n");
  EXPECT_EQ(output(e, ":model dcgan classes=3"),
            "error: dcgan is not a classifier; it has no classes option\n");
  EXPECT_EQ(output(e, ":model resnet-18 shape=(3, 224)"),
            "error: resnet-18_v2 takes a 3-value sample shape such as (3, 224, 224), got (3, "
            "224)\n");
  // Too small for squeezenet's pooling: InferShape names the layer.
  EXPECT_EQ(output(e, ":model squeezenet shape=(3, 16, 16)").substr(0, 40),
            "error: operator squeezenet0_pool1 (max_p");
  EXPECT_EQ(e.history().size(), steps);
}

// The zoo's params are drawn by Random.h's generator, which must give exactly the numbers
// std::mt19937 and libstdc++'s uniform_real_distribution<double> give (the sessions print
// outputs computed from them): two million numbers and two million doubles, several seeds.
TEST(Models, ParamValuesAreTheStandardLibrarysSequence) {
  for (uint32_t seed : {0u, 1u, 42u, 5489u, 4294967295u}) {
    std::mt19937 ref(seed);
    models::Mt19937 mine(seed);
    for (int i = 0; i < 2000000; ++i)
      ASSERT_EQ(mine(), ref()) << "seed " << seed << ", number " << i;
    std::uniform_real_distribution<double> u(-0.0625, 0.0625);
    for (int i = 0; i < 2000000; ++i)
      ASSERT_EQ(models::uniform(mine, -0.0625, 0.0625), u(ref)) << "seed " << seed << ", " << i;
  }
}
