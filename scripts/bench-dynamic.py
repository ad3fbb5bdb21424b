#!/usr/bin/env python3
"""Times a model exported with dynamic axes at several sizes (benchmarks only): Loupe's one
dynamic build run at each size (the variant :run builds), the same with `generic` (one build
whose generic kernels every size runs), Loupe's build of the file with that size fixed (:load
FILE SYMBOL=N), and ONNX Runtime on the same file at that shape — alternating the four in each
round, since these VMs drift between minutes.

usage: scripts/bench-dynamic.py --ort DIR [--loupe build/repl/loupe] [--rounds 1] [--runs 10]
       --shape "batch,seq,768" --sizes "batch=1,seq=16 batch=4,seq=128 ..." MODEL.onnx

Loupe's time is `:profile N`'s total (the sum of each kernel's median); ONNX Runtime's the
median of N runs (scripts/ort/ort_bench.js). Prints one Markdown row per size and thread count.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def loupe_ms(loupe, script, threads):
    env = dict(os.environ, LOUPE_NUM_THREADS=str(threads))
    out = subprocess.run([loupe], input=script, capture_output=True, text=True, env=env).stdout
    m = re.search(r"^total\s+[0-9.]+\s+([0-9.]+)\s", out, re.M)
    if not m:
        sys.exit(f"loupe gave no profile:\n{out[-1500:]}")
    return float(m.group(1))


def ort_ms(ort_dir, model, threads, shape, runs):
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    out = subprocess.run(["node", os.path.join(here, "ort", "ort_bench.js"), model, str(threads),
                          str(runs), shape], capture_output=True, text=True, env=env,
                         check=True).stdout
    return float(out.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ort", required=True)
    ap.add_argument("--loupe", default="build/repl/loupe")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--shape", required=True, help="the input shape with symbols: batch,seq,768")
    ap.add_argument("--sizes", required=True, help="bindings: 'batch=1,seq=16 batch=4,seq=128'")
    ap.add_argument("model")
    a = ap.parse_args()
    print("| size | threads | Loupe dynamic | Loupe generic | Loupe fixed | dynamic / fixed "
          "| generic / fixed | ONNX Runtime | dynamic / ORT | generic / ORT |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size in a.sizes.split():
        b = dict(kv.split("=") for kv in size.split(","))
        shape = ",".join(b.get(d, d) for d in a.shape.split(","))
        words = " ".join(f"{k}={v}" for k, v in b.items())
        dynamic = (f":load {a.model}\n:build opt_level=3\n:run {words} check=off\n"
                   f":profile {a.runs}\n")
        generic = dynamic.replace(":build opt_level=3", ":build opt_level=3 generic")
        fixed = f":load {a.model} {words}\n:build opt_level=3\n:profile {a.runs}\n"
        for threads in [int(t) for t in a.threads.split(",")]:
            d, g, f, o = [], [], [], []
            for _ in range(a.rounds):
                d.append(loupe_ms(a.loupe, dynamic, threads))
                o.append(ort_ms(a.ort, a.model, threads, shape, a.runs))
                g.append(loupe_ms(a.loupe, generic, threads))
                f.append(loupe_ms(a.loupe, fixed, threads))
            dm, gm, fm, om = (statistics.median(x) for x in (d, g, f, o))
            print(f"| {words} | {threads} | {dm:.2f} ms | {gm:.2f} ms | {fm:.2f} ms "
                  f"| {dm / fm:.2f}x | {gm / fm:.2f}x | {om:.2f} ms | {dm / om:.2f}x "
                  f"| {gm / om:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
