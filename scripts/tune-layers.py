#!/usr/bin/env python3
"""Tunes each convolution layer of the kernel benchmark, so its per-layer table can be measured
tuned (`python3 scripts/bench-tables.py --layers-only --tuning on`).

The benchmark builds every distinct convolution of its zoo networks alone (BM_LoupeConv); a
tuning record applies to a kernel whose computation is the same, so a layer fused with its bias
and activation inside a network is another task. This builds each layer exactly as the benchmark
does, then runs `:tune FUNC time=SECONDS check=0` on its convolution in the `loupe` REPL, which
appends to the log of $XDG_CACHE_HOME/loupe/tuning (records apply per thread count: set
LOUPE_NUM_THREADS as for the benchmark). Run from the source folder after a build:
  LOUPE_NUM_THREADS=1 python3 scripts/tune-layers.py [--time SECONDS] [--filter REGEX]
"""
import os
import re
import subprocess
import sys

BENCH = "build/tests/bench/loupe_kernel_bench"
LOUPE = "build/repl/loupe"
NAME = re.compile(r"^(\d+)x(\d+)x(\d+)_k(\d+)_(\d+)x(\d+)_s(\d+)_p(\d+)(_dw)?$")


def option(flag, default):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def layers(pattern):
    """The benchmark's convolution layers whose names (as 64x56x56_k64_3x3_s1_p1) match."""
    out = subprocess.run([BENCH, "--benchmark_list_tests", "--benchmark_filter=^BM_LoupeConv/"],
                         check=True, capture_output=True, text=True).stdout
    names = [line.split("/")[1] for line in out.split() if line.startswith("BM_LoupeConv/")]
    return [n for n in names if re.search(pattern, n)]


def program(name):
    """The graph-language lines BM_LoupeConv builds for a layer of this name."""
    c, h, w, k, kh, kw, s, p, dw = NAME.match(name).groups()
    groups = c if dw else 1
    return (f'x = Variable("x", shape=(1,{c},{h},{w}))\n'
            f"y = conv2d(x, channels={k}, kernel_size=({kh},{kw}), strides=({s},{s}), "
            f'padding=({p},{p}), groups={groups}, use_bias=False, name="c")\n'
            ":graph y\n:build opt_level=3 param c_weight=random\n")


def loupe(lines):
    return subprocess.run([LOUPE], input=lines, check=True, capture_output=True,
                          text=True).stdout


def main():
    seconds = option("--time", "60")
    names = layers(option("--filter", ".*"))
    print(f"tuning {len(names)} layers, {seconds} s each")
    for i, name in enumerate(names, 1):
        build = program(name)
        funcs = re.findall(r"'func_name': '([^']*conv2d[^']*)'", loupe(build + ":nodes\n"))
        if len(funcs) != 1:
            sys.exit(f"{name}: expected one convolution function, found {funcs}")
        out = loupe(build + f":tune {funcs[0]} time={seconds} check=0\n")
        row = next((line for line in out.splitlines() if line.startswith(funcs[0])), "")
        print(f"[{i}/{len(names)}] {name}: {' '.join(row.split()[1:])}", flush=True)


if __name__ == "__main__":
    main()
