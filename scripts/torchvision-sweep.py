#!/usr/bin/python3
"""The torchvision sweep: every classification network Debian's torchvision has, exported by
torch.onnx at 224x224 with random weights, loaded by Loupe, built at opt_level 0, 2 and 3 and run
on the exported input; each build's output is compared with PyTorch's own.

Needs Debian's python3-torch and python3-torchvision (apt-get install python3-torch
python3-torchvision) and a built Loupe (bash scripts/setup.sh). Run from the source folder:

  /usr/bin/python3 scripts/torchvision-sweep.py [--out DIR] [--opt 0,2,3] [--tol T]
                                                [--loupe PATH] [MODEL ...]

With no MODEL, every network torchvision.models lists (80 in torchvision 0.14). Exports are
kept in DIR (default /tmp/loupe-torchvision) and made again only when missing. A build passes when
its largest absolute difference from PyTorch is at most T (default 1e-4) times the largest
magnitude of PyTorch's output. Prints one line per network and build; exits 1 when any fails.
The same check per network is the ctest tier `torchvision` (cmake -DLOUPE_SWEEP=ON, then
ctest -L torchvision).
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOUPE = os.path.join(ROOT, "build", "repl", "loupe")  # --loupe names another


def export(name, folder):
    """model.onnx, input.npy and PyTorch's output.npy for network `name` in `folder`."""
    import numpy as np
    import torch
    import torchvision

    path = os.path.join(folder, "model.onnx")
    if all(os.path.exists(os.path.join(folder, f)) for f in ("model.onnx", "input.npy",
                                                             "output.npy")):
        return path
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        y = model(x)
    errors = []
    for opset in (13, 17):  # 17 where an op needs it
        try:
            torch.onnx.export(model, x, path, input_names=["input"], output_names=["output"],
                              opset_version=opset)
            break
        except Exception as e:  # the exporter's own errors, said below
            errors.append(f"opset {opset}: {str(e).splitlines()[0]}")
    else:
        raise RuntimeError("torch.onnx.export failed: " + "; ".join(errors))
    np.save(os.path.join(folder, "input.npy"), x.numpy())
    np.save(os.path.join(folder, "output.npy"), y.numpy().astype(np.float32))
    return path


def check(loupe, name, folder, opts, tol):
    """(ok, lines): each build's difference from PyTorch, judged against `tol`."""
    import numpy as np

    expected = np.load(os.path.join(folder, "output.npy"))
    scale = float(np.abs(expected).max())
    script = [":set cache off", f":load {os.path.join(folder, 'model.onnx')}"]
    for opt in opts:
        script += [f":build opt_level={opt}",
                   f":run input={os.path.join(folder, 'input.npy')} "
                   f"compare={os.path.join(folder, 'output.npy')} check=off", ":undo"]
    t0 = time.time()
    done = subprocess.run([loupe, "/dev/stdin"], input="\n".join(script) + "\n",
                          capture_output=True, text=True)
    seconds = time.time() - t0
    errors = [line for line in done.stdout.splitlines() if line.startswith("error:")]
    found = re.findall(r"vs \S*output\.npy: max abs error (\S+),", done.stdout)
    lines, ok = [], not errors and len(found) == len(opts)
    for opt, err in zip(opts, found):
        good = float(err) <= tol * scale
        ok &= good
        lines.append(f"{name:22s} opt_level {opt}: max abs error {float(err):.1e} "
                     f"(output up to {scale:.3g}) {'ok' if good else 'FAILED'}")
    for e in errors:
        lines.append(f"{name:22s} {e}")
    if len(found) < len(opts) and not errors:
        lines.append(f"{name:22s} no comparison printed; loupe exited {done.returncode}: "
                     f"{done.stderr.strip()[-300:]}")
    lines.append(f"{name:22s} {'passed' if ok else 'FAILED'} in {seconds:.0f} s")
    return ok, lines


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*")
    p.add_argument("--out", default="/tmp/loupe-torchvision")
    p.add_argument("--opt", default="0,2,3")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--loupe", default=LOUPE)
    a = p.parse_args()
    try:
        import torchvision
    except ImportError:
        sys.exit("torchvision-sweep: needs Debian's python3-torch and python3-torchvision "
                 "(apt-get install python3-torch python3-torchvision), run by /usr/bin/python3")
    if not os.access(a.loupe, os.X_OK):
        sys.exit(f"torchvision-sweep: no {a.loupe}; build Loupe first (bash scripts/setup.sh)")
    names = a.models or torchvision.models.list_models(module=torchvision.models)
    opts = [int(o) for o in a.opt.split(",")]
    failed = []
    for name in names:
        folder = os.path.join(a.out, name)
        try:
            export(name, folder)
        except Exception as e:  # an export PyTorch cannot make is reported, and the sweep goes on
            print(f"{name:22s} FAILED to export: {e}", flush=True)
            failed.append(name)
            continue
        ok, lines = check(a.loupe, name, folder, opts, a.tol)
        print("\n".join(lines), flush=True)
        if not ok:
            failed.append(name)
    print(f"{len(names) - len(failed)} of {len(names)} networks passed" +
          (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
