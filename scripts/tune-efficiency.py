#!/usr/bin/env python3
"""How efficient :tune's search is: for each of a network's tasks, the best time 64 trials find
against the best of the whole space (or of 1000 trials where the space is larger), each search in
a fresh log of its own. Prints a table; the search is efficient where 64 trials reach >= 95%.

usage: scripts/tune-efficiency.py [--loupe build/repl/loupe] [--model resnet-18]
                                  [--trials 64] [--full 1000] FUNC...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def best_ms(loupe, model, func, trials, cache):
    script = (f":model {model}\n:build opt_level=3\n:tune {func} trials={trials} time=100000\n")
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    out = subprocess.run([loupe], input=script, capture_output=True, text=True, env=env,
                         check=False).stdout
    for line in out.splitlines():
        if line.startswith(func[:41]):
            cols = line.split()
            # function calls trials rule_ms best_ms gain GFLOP/s point...
            return int(cols[2].rstrip('*')), float(cols[3]), float(cols[4]), cols[2].endswith('*')
    sys.exit(f"no result for {func}:\n{out[-2000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loupe", default="build/repl/loupe")
    ap.add_argument("--model", default="resnet-18")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--full", type=int, default=1000)
    ap.add_argument("funcs", nargs="+")
    a = ap.parse_args()
    print(f"| task | space searched | best of {a.full} or all (ms) | best of {a.trials} (ms) "
          f"| reached | rule (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for func in a.funcs:
        with tempfile.TemporaryDirectory() as c1, tempfile.TemporaryDirectory() as c2:
            n_full, rule_full, full, exhausted = best_ms(a.loupe, a.model, func, a.full, c1)
            n_few, _, few, _ = best_ms(a.loupe, a.model, func, a.trials, c2)
        reached = full / few
        searched = f"{n_full} (all)" if exhausted else str(n_full)
        print(f"| {func} | {searched} | {full:.4f} | {few:.4f} | {100 * reached:.0f}% "
              f"| {rule_full:.4f} |", flush=True)


if __name__ == "__main__":
    main()
