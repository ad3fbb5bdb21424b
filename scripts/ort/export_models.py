#!/usr/bin/env python3
"""Exports torchvision networks to ONNX for the ONNX Runtime comparison (benchmarks only).
Needs Debian's python3-torch and python3-torchvision; the weights are random (seeded), since
speed does not depend on them and nothing is downloaded.

usage: scripts/ort/export_models.py [--dynamic] OUT_DIR [resnet18 resnet50 bert_encoder ...]

--dynamic exports with dynamic axes, as torch.onnx.export's dynamic_axes writes them: `batch`
(axis 0) for every network, and `seq` (axis 1) for bert_encoder; the file is NAME_dynamic.onnx.

bert_encoder is a BERT-base-sized torch.nn.TransformerEncoder (12 layers, width 768, 12 heads,
FF 3072, erf GELU) on 128 tokens, batch 1. Its layers are deep copies of one layer, so their
weights are equal and the exporter writes them once (a 28 MB file, the layers reading one
weight through Identity); bert_encoder_distinct is the same network with every layer's weights
drawn anew, as a trained network has them (a 340 MB file). lstm is a two-layer torch.nn.LSTM (input 256,
hidden 512) over 35 steps, batch 1, its output sequence the result. r3d_18 is torchvision's
3-D video network on 8 frames of 112x112; any other name is a torchvision.models image network
on 224x224 (swin_t, shufflenet_v2_x0_5, vit_b_16, convnext_tiny, ...).
"""
import os
import sys

import torch
import torchvision


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help") or args[0].startswith("-") and args[0] != "--dynamic":
        sys.exit(__doc__)
    dynamic = "--dynamic" in args
    args = [a for a in args if a != "--dynamic"]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    names = args[1:] or ["squeezenet1_0", "resnet18", "resnet50"]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name in names:
        if name in ("bert_encoder", "bert_encoder_distinct"):
            layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0,
                                                     activation="gelu", batch_first=True)
            model = torch.nn.TransformerEncoder(layer, 12).eval()
            if name == "bert_encoder_distinct":
                with torch.no_grad():
                    for p in model.parameters():
                        p.normal_(0.0, 0.02)
            x = torch.randn(1, 128, 768)
        elif name == "lstm":
            class Lstm(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = torch.nn.LSTM(256, 512, num_layers=2)

                def forward(self, x):
                    return self.lstm(x)[0]
            model = Lstm().eval()
            x = torch.randn(35, 1, 256)
        elif name == "r3d_18":
            model = torchvision.models.video.r3d_18().eval()
            x = torch.randn(1, 3, 8, 112, 112)
        else:
            model = getattr(torchvision.models, name)().eval()
            x = torch.randn(1, 3, 224, 224)
        path = os.path.join(out, name + ("_dynamic" if dynamic else "") + ".onnx")
        axes = None
        if dynamic:
            axes = {0: "batch", 1: "seq"} if name.startswith("bert") else {0: "batch"}
            axes = {"input": axes, "output": axes}
        torch.onnx.export(model, x, path, input_names=["input"], output_names=["output"],
                          opset_version=13, dynamic_axes=axes)
        print(path)


if __name__ == "__main__":
    main()
