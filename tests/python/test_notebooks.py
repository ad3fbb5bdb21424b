"""The notebooks in examples/notebooks run headless (Debian's nbclient and ipykernel) with no
error, and show what the seeds print and the pictures Loupe draws."""

import atexit
import os
import shutil
import tempfile

import nbclient  # Debian's python3-nbclient, python3-nbformat and python3-ipykernel (setup.sh)
import nbformat

# The kernel's connection files and IPython's profile in a folder of their own: a CI machine's
# home may be read-only or shared.
_SCRATCH = tempfile.mkdtemp(prefix="loupe-notebooks-")
atexit.register(shutil.rmtree, _SCRATCH, True)
os.environ.setdefault("JUPYTER_RUNTIME_DIR", os.path.join(_SCRATCH, "runtime"))
os.environ.setdefault("IPYTHONDIR", os.path.join(_SCRATCH, "ipython"))

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOKS = os.path.join(HERE, "..", "..", "examples", "notebooks")


def executed(name):
    nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    # Seed 003's own `np.empty(shape).astype("float32")` casts whatever memory it got, which now
    # and then holds a double beyond float32's range: NumPy's overflow warning would join the
    # cell's printed text. The kernel inherits this environment.
    saved = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = "ignore::RuntimeWarning"
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    finally:
        if saved is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = saved
    return [c for c in nb.cells if c.cell_type == "code"]


def text_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def data_of(cell, kind):
    for o in cell.outputs:
        if o.output_type in ("execute_result", "display_data") and kind in o.data:
            return o.data[kind]
    return None


def test_seed001_notebook_prints_the_seed_and_draws_the_partition():
    cells = executed("seed001_passes.ipynb")
    assert all(o.output_type != "error" for c in cells for o in c.outputs)
    roots = next(c for c in cells if c.source.startswith('print("roots: "'))
    assert text_of(roots).startswith(
        "roots: [0, 1, 2, 4, 4, 5, 6, 9, 9, 9, 10, 11, 12, 13, 14, 15]\n"
        "masters: [-1, -1, -1, 3, 3, -1, -1, 7, 7, 7, 10, -1, -1, 13, 14, 15]\n\n"
        "x has root x and master None\n")
    nodes = next(c for c in cells if c.source == "graph.index.nodes")
    assert data_of(nodes, "text/plain").startswith(
        "[{'attrs': {'dtype': '1', 'shape': '(1, 13, 100, 100)'},\n  'inputs': [],\n")
    picture = data_of(next(c for c in cells if c.source == "graph"), "image/svg+xml")
    assert picture.startswith("<svg") and picture.count('class="group"') == 2
    assert "fuse_conv2d_relu_broadcast_add" in picture


def test_seed000_notebook_logs_the_build_and_draws_the_deploy_graph():
    cells = executed("seed000_build.ipynb")
    assert all(o.output_type != "error" for c in cells for o in c.outputs)
    build = next(c for c in cells if "nnvm.compiler.build(" in c.source)
    printed = text_of(build)
    assert printed.startswith("Applied passes SaveJSON\nGraph() {\n  ret \n}\n")
    assert printed.index("DEBUG:root:lower function fuse_conv2d_broadcast_add") < printed.index(
        "Applied passes GraphFuseCompile")
    picture = data_of(cells[-1], "image/svg+xml")
    # x (the graph's input keeps its box), w, b and the two tvm_op.
    assert picture.count('<g class="node">') == 5


def test_workbench_notebook_shows_diffs_loops_and_profiles():
    cells = executed("workbench.ipynb")
    assert all(o.output_type != "error" for c in cells for o in c.outputs)
    diff = data_of(next(c for c in cells if "s.diff()" in c.source), "text/html")
    assert '<span style="color: #1ea03c">+graph_attr_keys = [' in diff
    # conv2d, relu and the add are one group; flatten, dense, softmax and sum one node each.
    assert data_of(cells[2], "image/svg+xml").count('class="group"') == 1
    run = data_of(next(c for c in cells if "s.run(" in c.source), "text/plain")
    assert run.endswith(", 0.0)")  # the build agrees with the reference interpreter
    loops = data_of(next(c for c in cells if "s.lower(" in c.source), "text/html")
    assert "produce compute" in loops
    table = data_of(cells[-1], "text/html")
    assert table.startswith("<table><thead><tr><th>node</th>") and table.count("<tr>") == 1 + 5 + 1


def test_seed003_notebook_prints_relay_modules_and_draws_the_fused_function():
    cells = executed("seed003_pass_infra.ipynb")
    assert all(o.output_type != "error" for c in cells for o in c.outputs)
    folded = text_of(next(c for c in cells if "mod = fold_const(mod)" in c.source))
    assert folded.startswith("def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, "
                             "64, 56, 56), float32] */, %weight: ")
    assert "  add(%2, %3) /* ty=Tensor[(1, 64, 54, 54), float32] */\n}\n" in folded
    custom = text_of(next(c for c in cells if "custom_pass(mod)" in c.source))
    assert "  %2 = multiply(3f /* ty=float32 */, 2f /* ty=float32 */) /* ty=float32 */;\n" in custom
    traced = text_of(next(c for c in cells if "instruments=[PrintIR()]" in c.source))
    assert traced.count("Running pass: {} The meta data of the pass") == 10
    picture = data_of(cells[-1], "image/svg+xml")
    assert picture.startswith("<svg") and picture.count('class="group"') == 1
