#!/usr/bin/python3
"""Writes the small ONNX models under tests/onnx/data/blocks: a transformer encoder block and a
MobileNetV3 block, with the operators and the Shape -> Gather -> Unsqueeze -> Concat -> Reshape
chains PyTorch's exporter emits, and for each an input and the expected output computed here with
NumPy (independently of Loupe), in the layout of the ONNX backend tests (model.onnx,
test_data_set_0/input_0.pb, output_0.pb), which loupe_onnx_conformance reads.

Needs Debian's python3-onnx and python3-numpy. Run from the source folder:
  /usr/bin/python3 tests/onnx/make_blocks.py
The files are committed (about 60 KB); rerun only to change the blocks.
"""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "blocks")
rng = np.random.default_rng(2026)


class Builder:
    """Nodes and initializers of one graph, each output named after its node."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def op(self, kind, *inputs, **attrs):
        self.n += 1
        out = f"{kind.lower()}_{self.n}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], name=out, **attrs))
        return out

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name, *shape, scale=1.0):
        w = (rng.standard_normal(shape) * scale).astype(np.float32)
        self.const(name, w)
        return name, w

    def save(self, name, x, x_shape, y, y_shape, inp, expected):
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, y_shape)], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                  producer_name="loupe tests/onnx/make_blocks.py")
        onnx.checker.check_model(model)
        d = os.path.join(OUT, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        for i, (arr, tname) in enumerate([(inp, x), (expected, y)]):
            kind = "input" if i == 0 else "output"
            t = numpy_helper.from_array(arr.astype(np.float32), tname)
            with open(os.path.join(d, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
                f.write(t.SerializeToString())


def layer_norm(x, g, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def erf(x):
    return np.vectorize(math.erf)(x)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm_params(g, name, width):
    """A layer norm's scale (near 1) and bias as initializers NAME.weight, NAME.bias."""
    scale = (1 + 0.2 * rng.standard_normal(width)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(width)).astype(np.float32)
    g.const(name + ".weight", scale)
    g.const(name + ".bias", bias)
    return scale, bias


def transformer_block():
    """Post-norm encoder layer (BERT's): 4-head self-attention, residual, LayerNormalization,
    a gelu MLP exported as PyTorch writes erf gelu, residual, LayerNormalization. The head
    shapes come from Shape(x) as in an export with dynamic batch and sequence axes."""
    B, S, D, H, F = 2, 6, 32, 4, 64
    Dh = D // H
    g = Builder()
    x = "x"
    shape = g.op("Shape", x)
    batch = g.op("Unsqueeze", g.op("Gather", shape, g.const("zero", np.array(0, np.int64)),
                                   axis=0), g.const("axes0", np.array([0], np.int64)))
    seq = g.op("Unsqueeze", g.op("Gather", shape, g.const("one", np.array(1, np.int64)), axis=0),
               "axes0")
    heads_shape = g.op("Concat", batch, seq, g.const("heads", np.array([H, Dh], np.int64)), axis=0)
    model_shape = g.op("Concat", batch, seq, g.const("width", np.array([D], np.int64)), axis=0)
    ws = {}

    def linear(inp, name, n_in, n_out):
        w_name, w = g.weight(name + ".weight_t", n_in, n_out, scale=1 / math.sqrt(n_in))
        b_name, b = g.weight(name + ".bias", n_out, scale=0.1)
        ws[name] = (w, b)
        return g.op("Add", g.op("MatMul", inp, w_name), b_name)

    def heads(name, perm):
        return g.op("Transpose", g.op("Reshape", linear(x, name, D, D), heads_shape), perm=perm)

    q = heads("query", [0, 2, 1, 3])
    k = heads("key", [0, 2, 3, 1])
    v = heads("value", [0, 2, 1, 3])
    scores = g.op("Div", g.op("MatMul", q, k), g.const("scale", np.array(math.sqrt(Dh), np.float32)))
    ctx = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    ctx = g.op("Reshape", g.op("Transpose", ctx, perm=[0, 2, 1, 3]), model_shape)
    r1 = g.op("Add", x, linear(ctx, "attention_out", D, D))
    g1, b1 = layer_norm_params(g, "ln1", D)
    n1 = g.op("LayerNormalization", r1, "ln1.weight", "ln1.bias", axis=-1, epsilon=1e-5)
    h = linear(n1, "intermediate", D, F)
    gelu = g.op("Mul", g.op("Mul", h, g.op("Add", g.op("Erf", g.op("Div", h, g.const(
        "sqrt2", np.array(math.sqrt(2), np.float32)))), g.const("one_f", np.array(1, np.float32)))),
        g.const("half", np.array(0.5, np.float32)))
    r2 = g.op("Add", n1, linear(gelu, "output", F, D))
    g2, b2 = layer_norm_params(g, "ln2", D)
    y = g.op("LayerNormalization", r2, "ln2.weight", "ln2.bias", axis=-1, epsilon=1e-5)

    xv = rng.standard_normal((B, S, D)).astype(np.float32)
    lin = lambda a, n: a @ ws[n][0].astype(np.float64) + ws[n][1]
    split = lambda a: a.reshape(B, S, H, Dh).transpose(0, 2, 1, 3)
    a = xv.astype(np.float64)
    p = softmax(split(lin(a, "query")) @ split(lin(a, "key")).transpose(0, 1, 3, 2) / math.sqrt(Dh))
    c = (p @ split(lin(a, "value"))).transpose(0, 2, 1, 3).reshape(B, S, D)
    n1v = layer_norm(a + lin(c, "attention_out"), g1, b1, 1e-5)
    hv = lin(n1v, "intermediate")
    gv = hv * 0.5 * (1 + erf(hv / math.sqrt(2)))
    yv = layer_norm(n1v + lin(gv, "output"), g2, b2, 1e-5)
    g.save("test_transformer_block", x, ["batch", "sequence", D], y, ["batch", "sequence", D],
           xv, yv)


def conv2d(x, w, b, stride=1, pad=0, groups=1):
    """NCHW convolution, OIHW weights, by explicit sums."""
    n, c, hh, ww = x.shape
    o, ig, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (hh + 2 * pad - kh) // stride + 1, (ww + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        gi = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, gi * ig:(gi + 1) * ig, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
        y[:, oc] += b[oc]
    return y


def hard_swish(x):
    return x * np.clip(x + 3, 0, 6) / 6


def mobilenetv3_block():
    """torchvision's InvertedResidual with squeeze-and-excitation, batch norms folded into the
    convolutions as an eval-mode export has them: 1x1 expand + hard_swish, 3x3 depthwise +
    hard_swish, SE (global average pool, 1x1, relu, 1x1, hard_sigmoid, multiply), 1x1 project,
    residual add."""
    N, C, E, R, HW = 1, 16, 48, 12, 10
    g = Builder()
    x = "x"
    params = {}

    def conv(inp, name, o, i, k, pad=0, groups=1):
        w_name, w = g.weight(name + ".weight", o, i, k, k, scale=1 / math.sqrt(i * k * k))
        b_name, b = g.weight(name + ".bias", o, scale=0.1)
        params[name] = (w.astype(np.float64), b.astype(np.float64))
        return g.op("Conv", inp, w_name, b_name, kernel_shape=[k, k], pads=[pad] * 4, group=groups)

    e = g.op("HardSwish", conv(x, "expand", E, C, 1))
    d = g.op("HardSwish", conv(e, "depthwise", E, 1, 3, pad=1, groups=E))
    s = g.op("Relu", conv(g.op("GlobalAveragePool", d), "se.fc1", R, E, 1))
    s = g.op("HardSigmoid", conv(s, "se.fc2", E, R, 1), alpha=1 / 6, beta=0.5)
    y = g.op("Add", x, conv(g.op("Mul", d, s), "project", C, E, 1))

    xv = rng.standard_normal((N, C, HW, HW)).astype(np.float32)
    c = lambda a, n, **kw: conv2d(a, *params[n], **kw)
    ev = hard_swish(c(xv.astype(np.float64), "expand"))
    dv = hard_swish(c(ev, "depthwise", pad=1, groups=E))
    sv = np.maximum(c(dv.mean((2, 3), keepdims=True), "se.fc1"), 0)
    sv = np.clip(c(sv, "se.fc2") / 6 + 0.5, 0, 1)
    yv = xv + c(dv * sv, "project")
    g.save("test_mobilenetv3_block", x, [N, C, HW, HW], y, [N, C, HW, HW], xv, yv)


if __name__ == "__main__":
    transformer_block()
    mobilenetv3_block()
    print("wrote", OUT)
