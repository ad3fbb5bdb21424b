#!/usr/bin/env python3
"""Runs the kernel benchmark on one and two threads and prints the README's speed tables.

Every figure is the median of three repetitions. Per layer (one thread): Loupe's convolution
against oneDNN's and XNNPACK's on the same shape, with GFLOP/s, % of this machine's FP32 peak
(measured in the same run) and the ratios. Per network: ms per image on one and two threads,
GFLOP/s and % of peak on one. Loupe's kernels are built at their rules, or with the tuning
records --tuning names (`:set tuning`'s values: on is $XDG_CACHE_HOME's log, or a file). Run
from the source folder after a build:
  python3 scripts/bench-tables.py [--layers-only | --networks-only] [--tuning on|FILE]
"""
import json
import os
import subprocess
import sys

BENCH = "build/tests/bench/loupe_kernel_bench"
TUNING = sys.argv[sys.argv.index("--tuning") + 1] if "--tuning" in sys.argv else "off"


def run(threads, pattern):
    """Each benchmark's median of three repetitions (this VM's speed moves by 10% and more
    between minutes), under the benchmark's own name."""
    env = dict(os.environ, LOUPE_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([BENCH, "--tuning=" + TUNING, "--benchmark_filter=" + pattern,
                          "--benchmark_format=json",
                          "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true"],
                         env=env, check=True, capture_output=True, text=True).stdout
    rows = json.loads(out[out.index("{"):out.rindex("}") + 1])["benchmarks"]
    medians = [dict(b, name=b["run_name"]) for b in rows if b.get("aggregate_name") == "median"]
    return medians


def layers():
    rows = run(1, "BM_PeakFMA|Conv")
    peak = next(b["peak_1core_GFLOP/s"] for b in rows if b["name"] == "BM_PeakFMA")
    loupe = {b["name"].split("/")[1]: b for b in rows if b["name"].startswith("BM_LoupeConv")}
    dnnl = {b["name"].split("/")[1]: b for b in rows if b["name"].startswith("BM_OneDNNConv")}
    xnn = {b["name"].split("/")[1]: b for b in rows if b["name"].startswith("BM_XnnpackConv")}
    print(f"FP32 peak {peak:.1f} GFLOP/s per core (FMA loop, same run); "
          f"tuning records: {TUNING}\n")
    print("| layer (C×H×W, K, kernel, stride, pad) | Loupe ms | Loupe GFLOP/s | % of peak "
          "| oneDNN GFLOP/s | ratio | XNNPACK GFLOP/s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    ratios, xratios = [], []
    for name, b in loupe.items():
        d, x = dnnl[name], xnn[name]
        ratio, xratio = b["GFLOP/s"] / d["GFLOP/s"], b["GFLOP/s"] / x["GFLOP/s"]
        if not name.endswith("_dw"):
            ratios.append(ratio)
            xratios.append(xratio)
        print(f"| {name} | {b['conv_ms']:.3f} | {b['GFLOP/s']:.1f} | "
              f"{100 * b['GFLOP/s'] / peak:.0f}% | {d['GFLOP/s']:.1f} | {ratio:.2f} | "
              f"{x['GFLOP/s']:.1f} | {xratio:.2f} |")
    for peer, r in (("oneDNN", ratios), ("XNNPACK", xratios)):
        r.sort()
        print(f"\nagainst {peer}: median ratio {r[len(r) // 2]:.2f}, lowest {r[0]:.2f} over "
              f"{len(r)} ungrouped layers")


def networks():
    one, two = run(1, "BM_PeakFMA|BM_Network"), run(2, "BM_Network")
    peak = next(b["peak_1core_GFLOP/s"] for b in one if b["name"] == "BM_PeakFMA")
    ms2 = {b["name"]: b["real_time"] for b in two}
    print(f"\nFP32 peak {peak:.1f} GFLOP/s per core (FMA loop, same run); "
          f"tuning records: {TUNING}\n")
    print("| network | GFLOP per image | 1 thread ms | GFLOP/s | % of peak | 2 threads ms "
          "| speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for b in one:
        if not b["name"].startswith("BM_Network"):
            continue
        name = b["name"].split("/")[1]
        gflops = b["GFLOP/s"]
        print(f"| {name} | {b['MFLOP'] / 1000:.2f} | {b['real_time']:.2f} | {gflops:.1f} | "
              f"{100 * gflops / peak:.0f}% | {ms2[b['name']]:.2f} | "
              f"{b['real_time'] / ms2[b['name']]:.2f}× |")


if __name__ == "__main__":
    if "--networks-only" not in sys.argv:
        layers()
    if "--layers-only" not in sys.argv:
        networks()
