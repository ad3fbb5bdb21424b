#!/usr/bin/python3
"""Writes small ONNX files exported by PyTorch itself under tests/onnx/data/exports, each with an
input and PyTorch's own output, in the layout of the ONNX backend tests (model.onnx,
test_data_set_0/input_0.pb, output_0.pb) that loupe_onnx_conformance reads at opt_level 0, 2
and 3. They are what users bring: torch.onnx.export's decomposed layer norms, erf and tanh GELU,
Gemm and MatMul by weights, Identity nodes sharing equal initializers, and recurrent networks
(a two-layer LSTM language model, a bidirectional GRU tagger, a ReLU RNN) with their
embeddings, the exporter's Slice/Squeeze/Transpose between layers and its initial states.

Needs Debian's python3-torch and python3-onnx. Run from the source folder:
  /usr/bin/python3 tests/onnx/export_torch.py
The files are committed (under 1 MB in all); rerun only to change the exports.
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "exports")


def save(name, model, x, opset=13):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    model.eval()
    with torch.no_grad():
        y = model(x)
    # Outside no_grad: there PyTorch's fused encoder kernel, which has no ONNX form, would run.
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], opset_version=opset)
    onnx.checker.check_model(onnx.load(path))
    for kind, arr, tname in [("input", x, "x"), ("output", y, "y")]:
        # Token ids stay integers; every float is written as float32.
        a = arr.numpy() if arr.dtype == torch.int64 else arr.numpy().astype(np.float32)
        t = numpy_helper.from_array(a, tname)
        with open(os.path.join(d, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(t.SerializeToString())
    print(path, os.path.getsize(path), "bytes")


class TanhMlp(torch.nn.Module):
    """A transformer's feed-forward block with tanh-form GELU and its layer norm written out."""

    def __init__(self, d, ff):
        super().__init__()
        self.up, self.down = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)
        self.gamma = torch.nn.Parameter(torch.randn(d) * 0.1 + 1)
        self.beta = torch.nn.Parameter(torch.randn(d) * 0.1)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x), approximate="tanh")
        y = x + self.down(h)
        mean = y.mean(-1, keepdim=True)
        var = ((y - mean) * (y - mean)).mean(-1, keepdim=True)
        return (y - mean) / torch.sqrt(var + 1e-6) * self.gamma + self.beta


class LstmLanguageModel(torch.nn.Module):
    """PyTorch's word_language_model example, small: embedding, a two-layer LSTM over
    (time, batch), a decoder to the vocabulary."""

    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, emb)
        self.lstm = torch.nn.LSTM(emb, hidden, num_layers=2)
        self.decoder = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.decoder(out)


class GruTagger(torch.nn.Module):
    """A sequence tagger: embedding, a bidirectional GRU over (batch, time), a tag per token."""

    def __init__(self, vocab, emb, hidden, tags):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, emb)
        self.gru = torch.nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.tags = torch.nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        out, _ = self.gru(self.embed(tokens))
        return self.tags(out)


class ReluRnn(torch.nn.Module):
    """An Elman RNN with ReLU whose last hidden state is the output."""

    def __init__(self, inp, hidden):
        super().__init__()
        self.rnn = torch.nn.RNN(inp, hidden, nonlinearity="relu")

    def forward(self, x):
        _, h = self.rnn(x)
        return h


def main():
    torch.manual_seed(2026)
    # torch.nn.TransformerEncoder deep-copies one layer, so the exporter shares the equal
    # initializers of its two layers through Identity nodes, as it does for BERT-sized ones.
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu",
                                             batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 2)
    for p in encoder.parameters():  # matrices differ, as after training; the zero biases and
        if p.dim() == 2:              # unit norm weights stay equal and shared
            with torch.no_grad():
                p.add_(torch.randn_like(p) * 0.02)
    save("test_torch_transformer_encoder", encoder, torch.randn(1, 16, 64))
    save("test_torch_gelu_tanh_mlp", TanhMlp(48, 96), torch.randn(2, 8, 48))
    classifier = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(2 * 4 * 4, 10),
                                     torch.nn.ReLU(), torch.nn.Linear(10, 5))
    save("test_torch_gemm_classifier", classifier, torch.randn(3, 2, 4, 4))
    save("test_torch_lstm_language_model", LstmLanguageModel(50, 16, 24),
         torch.randint(0, 50, (7, 2)))
    save("test_torch_gru_tagger", GruTagger(40, 12, 16, 9), torch.randint(0, 40, (2, 6)))
    save("test_torch_relu_rnn", ReluRnn(5, 8), torch.randn(4, 3, 5))


if __name__ == "__main__":
    main()
