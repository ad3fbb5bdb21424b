#!/usr/bin/python3
"""Writes a quantized network as PyTorch exports it (QDQ: QuantizeLinear/DequantizeLinear around
float ops) under tests/onnx/data/qdq, with an input and PyTorch's own quantized output as .npy
files, for sessions/onnx/qdq.session: a small CNN after torch.ao.quantization's eager
post-training quantization with fbgemm (the recipe torchvision's quantizable models use), exported
by torch.onnx at opset 13. Under hooks/, what each quantized module computed on that input
(forward hooks, dequantized), named as `:layerwise STEP DIR` reads them: the file of the ONNX
node that computes the module's output (its QuantizeLinear, `/conv1/QuantizeLinear` written as
`_conv1_QuantizeLinear.npy`), and the input as `x.npy`.

Needs Debian's python3-torch. Run from the source folder:
  /usr/bin/python3 tests/onnx/export_qdq.py
The files are committed (about 20 KB); rerun only to change the export.
"""
import os
import re

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "qdq")


class QuantizedConvNet(torch.nn.Module):
    """A small CNN as torch.ao.quantization's eager post-training quantization makes it (fbgemm):
    conv-bn-relu, a residual block whose add runs quantized (FloatFunctional), max pooling, global
    average pooling and a linear classifier between QuantStub and DeQuantStub."""

    def __init__(self):
        super().__init__()
        q = torch.ao.quantization
        self.quant, self.dequant = q.QuantStub(), q.DeQuantStub()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.relu1 = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.relu2 = torch.nn.ReLU()
        self.conv3 = torch.nn.Conv2d(8, 8, 1)
        self.add = torch.nn.quantized.FloatFunctional()
        self.pool = torch.nn.MaxPool2d(2)
        self.gap = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(self.quant(x))))
        y = self.conv3(self.relu2(self.conv2(x)))
        x = self.pool(self.add.add_relu(x, y))
        return self.dequant(self.fc(torch.flatten(self.gap(x), 1)))


def quantized_conv_net():
    """QuantizedConvNet with fbgemm post-training quantization, calibrated on random batches:
    what torch.onnx exports as QuantizeLinear/DequantizeLinear around float ops (QDQ)."""
    q = torch.ao.quantization
    m = QuantizedConvNet().eval()
    q.fuse_modules(m, [["conv1", "bn1", "relu1"], ["conv2", "relu2"]], inplace=True)
    m.qconfig = q.get_default_qconfig("fbgemm")
    q.prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(16):
            m(torch.randn(2, 3, 12, 12))
    return q.convert(m)


# The modules whose outputs PyTorch's export writes as a QuantizeLinear named after them (the
# quantized add runs inside FloatFunctional, a method no hook sees), and the final dequantize.
HOOKED = {name: f"/{name}/QuantizeLinear" for name in ["quant", "conv1", "conv2", "conv3", "pool",
                                                        "gap", "fc"]}
HOOKED["dequant"] = "/dequant/DequantizeLinear"


def file_stem(name):
    """Loupe's file name for a node (core/Npy.h npyFileStem): every character but letters, digits,
    '.', '_' and '-' becomes '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def dump_hooks(model, x, folder):
    """Runs `model` on `x` with a forward hook on each HOOKED module, saving its output (the
    real numbers a quantized tensor stands for) under the ONNX node's file name."""
    os.makedirs(folder, exist_ok=True)
    handles = []
    for module, node in HOOKED.items():
        def save(_, __, out, node=node):
            t = out.dequantize() if out.is_quantized else out
            np.save(os.path.join(folder, file_stem(node) + ".npy"), t.numpy().astype(np.float32))
        handles.append(getattr(model, module).register_forward_hook(save))
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    np.save(os.path.join(folder, "x.npy"), x.numpy().astype(np.float32))


def main():
    torch.manual_seed(2026)
    model = quantized_conv_net()
    x = torch.randn(2, 3, 12, 12)
    with torch.no_grad():
        y = model(x)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "qdq_convnet.onnx")
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], opset_version=13)
    np.save(os.path.join(OUT, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(OUT, "pytorch_output.npy"), y.numpy().astype(np.float32))
    dump_hooks(model, x, os.path.join(OUT, "hooks"))
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
