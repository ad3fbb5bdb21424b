#!/usr/bin/env python3
"""Exports torchvision's quantizable networks as PyTorch deploys them to ONNX, for the int8
comparison with ONNX Runtime (benchmarks only): each network with random (seeded) weights as
fp32 (NAME_fp32.onnx) and after fbgemm post-training quantization — modules fused, observers
calibrated on 4 random batches, converted — as QDQ (NAME_qdq.onnx), both opset 13 at 1x3x224x224.
Also writes input.npy (one seeded input) and NAME_pytorch.npy (the quantized network's output
on it), for :run compare=. Needs Debian's python3-torch and python3-torchvision.

usage: scripts/ort/export_quantized.py OUT_DIR [resnet18 resnet50 mobilenet_v2 googlenet ...]
"""
import os
import sys

import numpy as np
import torch
import torchvision.models.quantization as qm


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    out = sys.argv[1]
    names = sys.argv[2:] or ["resnet18", "resnet50"]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    # fbgemm's qconfig (per-channel weights, activations in 7 bits as fbgemm's kernels need); the
    # converted network runs on the engine Debian's torch has (onednn: it has no fbgemm).
    x = torch.randn(1, 3, 224, 224)
    np.save(os.path.join(out, "input.npy"), x.numpy())
    for name in names:
        kwargs = {"aux_logits": False, "init_weights": True} if name in (
            "googlenet", "inception_v3") else {}
        model = getattr(qm, name)(weights=None, quantize=False, **kwargs).eval()
        torch.onnx.export(model, x, os.path.join(out, f"{name}_fp32.onnx"), opset_version=13,
                          input_names=["x"], output_names=["y"])
        model.fuse_model()
        model.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
        torch.ao.quantization.prepare(model, inplace=True)
        with torch.no_grad():
            for _ in range(4):
                model(torch.randn(1, 3, 224, 224))
        torch.ao.quantization.convert(model, inplace=True)
        with torch.no_grad():
            np.save(os.path.join(out, f"{name}_pytorch.npy"), model(x).numpy())
        torch.onnx.export(model, x, os.path.join(out, f"{name}_qdq.onnx"), opset_version=13,
                          input_names=["x"], output_names=["y"])
        print(name, "exported")


if __name__ == "__main__":
    main()
