#!/usr/bin/env python3
"""Loupe against ONNX Runtime on the same ONNX files, one and two threads, in one run
(benchmarks only: ONNX Runtime is never a dependency of Loupe).

Loupe's time is `:profile 20`'s total (the sum of each kernel's median) after `:load FILE` and
`:build opt_level=3` (plus --build's options, e.g. precision=bf16), with LOUPE_NUM_THREADS set; ONNX Runtime's the median of 50 runs of
scripts/ort/ort_bench.js with intraOpNumThreads set. Runs alternate between the two, so that the
machine's drift falls on both.

usage: scripts/bench-onnxruntime.py --ort DIR (where `npm install onnxruntime-node
       --ignore-scripts` was run) MODEL.onnx ...   [--loupe build/repl/loupe] [--rounds 2]
       [--shape 1,3,224,224] (the input shape where python3-onnx is not installed)
       [--build "precision=bf16"] (more :build options for Loupe; ONNX Runtime runs the file)
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def loupe_ms(loupe, model, threads, build=""):
    script = f":load {model}\n:build opt_level=3 {build}\n:profile 20\n"
    env = dict(os.environ, LOUPE_NUM_THREADS=str(threads))
    out = subprocess.run([loupe], input=script, capture_output=True, text=True, env=env).stdout
    # total: the fastest, median and slowest whole run, share, rate, % of peak.
    m = re.search(r"^total\s+[0-9.]+\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+%\s+([0-9.]+)\s+([0-9.]+)%",
                  out, re.M)
    if not m:
        sys.exit(f"loupe gave no profile for {model}:\n{out[-1500:]}")
    return float(m.group(1)), float(m.group(3))


def input_shape(model, given=None):
    """The first graph input's shape, read with python3-onnx (a symbolic dimension counts 1), or
    the one given with --shape where python3-onnx is not installed."""
    if given:
        return given
    import onnx
    dims = onnx.load(model, load_external_data=False).graph.input[0].type.tensor_type.shape.dim
    return ",".join(str(d.dim_value or 1) for d in dims)


def ort_ms(ort_dir, model, threads, shape=None):
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    out = subprocess.run(["node", os.path.join(here, "ort", "ort_bench.js"), model, str(threads),
                          "50", input_shape(model, shape)],
                         capture_output=True, text=True, env=env, check=True).stdout
    return float(out.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort", required=True)
    ap.add_argument("--loupe", default="build/repl/loupe")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--shape", help="the input shape, e.g. 1,3,224,224 (else read with onnx)")
    ap.add_argument("--build", default="", help="more :build options, e.g. precision=bf16")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    print("| network | ORT 1 thread | Loupe 1 thread (% of peak) | ratio | ORT 2 threads "
          "| Loupe 2 threads | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for model in a.models:
        row = []
        for threads in (1, 2):
            o, l, p = [], [], []
            for _ in range(a.rounds):
                o.append(ort_ms(a.ort, model, threads, a.shape))
                ms, peak = loupe_ms(a.loupe, model, threads, a.build)
                l.append(ms)
                p.append(peak)
            om, lm = statistics.median(o), statistics.median(l)
            peak = f" ({statistics.median(p):.0f}%)" if threads == 1 else ""
            row += [f"{om:.1f} ms", f"{lm:.1f} ms{peak}", f"{lm / om:.2f}x"]
        name = os.path.splitext(os.path.basename(model))[0]
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
