"""Loupe from Python: a workbench session driving the same engine as the `loupe` REPL.

    import loupe
    s = loupe.Session()
    s.command('x = Variable("x", shape=(2, 3))')
    s.command("y = relu(x) + 1")
    s.graph("y")
    s.apply("InferShape", "InferType")
    s.build(opt_level=2)
    (y,) = s.run(x=numpy.ones((2, 3), "float32"))

Every REPL input goes through `Session.command`; the methods below are the common ones with
structured results. A failed input raises `loupe.Error` with the REPL's one-line message and
leaves the session as it was.
"""

import sys

from ._loupe import built_for_python

# Arrays in and out are NumPy's: an interpreter without it (another python3 first on the PATH,
# a virtual environment) would import the module and fail at the first run, so it fails here.
try:
    import numpy  # noqa: F401
except ImportError as missing:
    raise ImportError(
        f"loupe needs NumPy, which {sys.executable} cannot import; the module was built for "
        f"{built_for_python} (run PYTHONPATH=build/python {built_for_python})"
    ) from missing

from ._display import Diff, Profile, Text  # noqa: E402
from ._loupe import Error, _Session  # noqa: E402

__all__ = ["Error", "Outputs", "Session"]


class Outputs(list):
    """The outputs of a run as NumPy arrays, in the graph's order; `names` says which is which
    and `reference` holds the reference interpreter's values when the run was checked."""

    def __init__(self, names, outputs, reference):
        super().__init__(outputs)
        self.names = list(names)
        self.reference = list(reference)

    def max_abs_error(self):
        """The largest difference from the reference interpreter over every output (None when
        the run was not checked)."""
        if not self.reference:
            return None
        worst = 0.0
        for got, want in zip(self, self.reference):
            if got.size:
                worst = max(worst, float(abs(got.astype("float64") - want.astype("float64")).max()))
        return worst


def _options(options):
    """Keyword options as the REPL's words: shape=(1, 3) -> "shape=(1, 3)"."""
    words = []
    for key, value in options.items():
        if isinstance(value, (tuple, list)):
            value = "(" + ", ".join(str(v) for v in value) + ("," if len(value) == 1 else "") + ")"
        elif isinstance(value, bool):
            value = "on" if value else "off"
        words.append(f"{key}={value}")
    return " ".join(words)


class Session:
    """One workbench: symbols, the history of graph snapshots, settings (as one REPL has)."""

    def __init__(self):
        self._s = _Session()

    def command(self, line):
        """Runs one REPL input (a graph-language statement or a :command) and returns what it
        printed."""
        return self._s.command(line)

    def _call(self, name, *words, **options):
        return self.command(" ".join([":" + name, *words, _options(options)]).strip())

    def graph(self, *outputs):
        """Makes a graph of the named symbols (:graph)."""
        return self._call("graph", *outputs)

    def model(self, name, **options):
        """A zoo network (:model NAME batch=… shape=…)."""
        return self._call("model", name, **options)

    def load(self, path, **dims):
        """An ONNX file, its symbolic dimensions sized by keyword (:load)."""
        return self._call("load", str(path), **dims)

    def apply(self, *passes):
        """Applies passes in order (:apply); returns the step's line."""
        return self._call("apply", *passes)

    def ir(self):
        """The current graph's IR as NNVM prints it (:ir)."""
        return Text(self._call("ir"))

    def diff(self, a=None, b=None):
        """What changed between history steps a and b (:diff; by default the last step's
        change): the pass's effect, then the unified diff of the IR."""
        return Diff(self._call("diff", *[str(s) for s in (a, b) if s is not None]))

    def lower(self, function=None):
        """The lowered loops of a built function (:lower), all of them without a name."""
        return Text(self._call("lower", *([function] if function else [])))

    def build(self, **options):
        """Builds the current graph (:build opt_level=… target=… dtype=…); returns the deploy
        graph as printed."""
        return self._call("build", **options)

    def run(self, seed=0, check=False, **inputs):
        """Runs the built graph: inputs by name as NumPy arrays (the rest as :run fills them:
        bound params, else random from `seed`); returns the outputs as NumPy arrays, with the
        reference interpreter's beside them when `check=True` (off by default: the reference
        interpreter computes in double and takes many times a run's time, as :run check=on does
        in the REPL)."""
        return Outputs(*self._s.run_values(inputs, seed, check))

    def groups(self):
        """The fusion groups of the current (partitioned or built) step as :groups shows them:
        {"nodes": [{node, root, master}], "groups": [{root, members, pattern, master,
        function}], "opt_level", "rules"}."""
        return self._s.groups()

    def quantize(self, samples=1, per_channel=True, skip=(), seed=0):
        """A new step with the current graph's conv2d and dense between calibrated
        quantize/dequantize pairs (:quantize): int8 weights, uint8 activations from min/max over
        `samples` reference runs on random inputs; `skip` names layers kept float (or
        "first_last"). Returns what :quantize printed."""
        words = [f"samples={samples}", f"per_channel={'on' if per_channel else 'off'}",
                 f"seed={seed}"]
        if skip:
            words.append("skip=" + (skip if isinstance(skip, str) else ",".join(skip)))
        return self._call("quantize", *words)

    def layerwise(self, a, b, seed=0, **inputs):
        """Steps `a` and `b` run on the same inputs (given by name as NumPy arrays, the rest
        random from `seed`, the bound params as they are) and compared value by value
        (:layerwise): a dict per value both compute — node, op, output, sqnr_db, max_abs,
        max_rel, dequantized — in `b`'s graph order (sort by sqnr_db for the worst)."""
        return self._s.layerwise(a, b, inputs, seed)

    def profile(self, runs=10, **sizes):
        """Times each kernel of the built graph over `runs` runs (:profile); a row per kernel:
        node, kernel, ms (median), min_ms and max_ms (the fastest and slowest run), gflops,
        percent_peak. On a dynamic build, sizes by symbol (batch=4, seq=64) profile that size's
        variant, which becomes the current step."""
        self._call("profile", str(runs), **sizes)
        return Profile(self._s.profile_rows())

    def export(self, path, **sizes):
        """Writes the built graph for deployment into folder `path` (:export): deploy.so,
        deploy.h, the deploy graph's JSON and the params. On a dynamic build, sizes by symbol
        (seq=[64, 128], batch=1) export exactly those sizes' variants, built now if they were
        not; without them, every size built so far. Returns the files written, relative to
        `path`."""
        words = [f"{k}={','.join(str(v) for v in (vs if isinstance(vs, (list, tuple)) else [vs]))}"
                 for k, vs in sizes.items()]
        first = self.command(" ".join([":export", str(path), *words])).splitlines()[0]
        return first[first.index(": ", len("exported step")) + 2:].split(", ")

    def steps(self):
        """Every step's label, oldest first."""
        return self._s.steps()[0]

    @property
    def cursor(self):
        """The index of the current step (None before the first)."""
        return self._s.steps()[1]

    def report(self, path):
        """Writes the session so far as one self-contained HTML file (:report): each step's
        picture, IR, diff, fusion groups, loops and profile, with search."""
        return self._call("report", str(path))

    def svg(self):
        """The current step's graph drawn as the viewer draws it: boxes, edges, fusion groups
        as regions with their roots and masters (an SVG document)."""
        return self._s.current_svg()

    def _repr_svg_(self):
        # A notebook shows a session as its current graph (nothing before the first step).
        return self.svg() if self._s.steps()[1] is not None else None

    def undo(self):
        """Moves back one step (:undo)."""
        return self._call("undo")
