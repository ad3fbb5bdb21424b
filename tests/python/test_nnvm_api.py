"""loupe.nnvm and loupe.tvm beyond the seeds: builds run by the graph runtime agree with NumPy,
Graph values and attributes behave as NNVM's, gradients have the values calculus gives, and bad
input is a loupe.Error with the REPL's message that changes nothing."""

import numpy as np
import pytest

import loupe
import loupe.nnvm.compiler
import loupe.nnvm.symbol as sym
from loupe import nnvm, tvm
from loupe.nnvm.compiler import graph_util
from readme_code import run_readme_block


def run(graph, inputs, shapes, params=None, opt_level=2):
    with nnvm.compiler.build_config(opt_level=opt_level):
        deploy, lib, params = nnvm.compiler.build(graph, target="llvm", shape=shapes,
                                                  params=params)
    m = tvm.contrib.graph_runtime.create(deploy, lib, tvm.cpu(0))
    m.set_input(**params)
    m.run(**inputs)
    return deploy, params, [m.get_output(i).asnumpy() for i in range(m.get_num_outputs())]


@pytest.mark.parametrize("opt_level", [0, 2, 3])
def test_a_build_runs_and_agrees_with_numpy(opt_level):
    x, w = sym.Variable("x"), sym.Variable("w")
    y = sym.dense(data=sym.relu(x), weight=w, units=3, use_bias=False) * 2 + 1
    wv = np.arange(12, dtype="float32").reshape(3, 4) / 8
    xv = np.array([[1, -2, 3, 4], [-1, 0.5, 2, -3]], "float32")
    deploy, params, (out,) = run(nnvm.graph.create(y), {"x": xv}, {"x": (2, 4)}, {"w": wv},
                                 opt_level)
    assert list(params) == ["w"] and params["w"].shape == (3, 4)
    np.testing.assert_allclose(out, np.maximum(xv, 0) @ wv.T * 2 + 1, rtol=1e-6)
    # The module was moved out of the deploy graph into lib, as NNVM's build did.
    assert deploy.ir().endswith("graph_attr_keys = [storage_id, dtype, dltype, shape]\n")
    assert deploy.json_attr("module") is None


def test_gradients_have_the_values_calculus_gives():
    x = sym.Variable("x")
    y = sym.sum(x * x * 3)  # dy/dx = 6x
    (dx,) = graph_util.gradients(y, x)
    xv = np.array([[0.5, -1.25, 2]], "float32")
    _, _, (yv, gv) = run(nnvm.graph.create(sym.Group([y, dx])), {"x": xv}, {"x": (1, 3)})
    np.testing.assert_allclose(yv, [3 * (xv * xv).sum()], rtol=1e-6)
    np.testing.assert_array_equal(gv, 6 * xv)


def test_graph_values_apply_attributes_and_index():
    x = sym.Variable("x", dtype=0)
    g = nnvm.graph.create(sym.relu(x) + 1)
    g._set_json_attr("shape_inputs", [[2, 3]], "list_shape")  # in place, as NNVM's
    assert g.json_attr("shape_inputs") == [[2, 3]]
    inferred = g.apply(["InferShape", "InferType"])
    assert g.json_attr("shape") is None  # apply leaves the graph it was given as it was
    assert inferred.json_attr("shape") == [[2, 3], [2, 3], [2, 3]]
    assert inferred.json_attr("dtype") == [0, 0, 0]
    inferred._set_json_attr("target", "llvm")  # the type guessed from the value
    assert inferred.json_attr("target") == "llvm"
    index = g.index
    assert index.input_names == ["x"] and index.num_nodes == 3
    assert [n["op"] for n in index.nodes] == ["null", "relu", "__add_scalar__"]
    assert index.entry_id(index.nodes[2]["name"]) == 2 and index.output_entries == [[2, 0, 0]]
    again = nnvm.graph.load_json(g.json())
    assert again.ir() == g.ir()
    assert graph_util.infer_shape(nnvm.graph.create(sym.dense(sym.Variable("d"), units=5)),
                                  d=(7, 4)) == ([[7, 4], [5, 4], [5]], [[7, 5]])
    assert graph_util.infer_dtype(g, x="float64") == ([1], [1])


def runtime_of(g):
    deploy, lib, _ = nnvm.compiler.build(g, target="llvm", shape={"x": (2,)})
    return tvm.contrib.graph_runtime.create(deploy, lib)


def unset_input_run(g):
    runtime_of(g).run()


def test_bad_input_is_one_line_with_the_repls_message_and_changes_nothing():
    s = loupe.Session()
    s.command('x = Variable("x")')
    with pytest.raises(loupe.Error) as repl:
        s.command("y = conv2d(data=x, foo=1)")
    x = sym.Variable("x")
    before = sym.relu(x)
    with pytest.raises(loupe.Error) as py:
        sym.conv2d(data=x, foo=1)
    # The same message, without the place in the REPL's line (Python's line is the traceback's).
    assert str(repl.value).endswith(str(py.value))
    assert str(py.value).startswith("conv2d: unknown attribute 'foo'; conv2d takes channels")
    # The failed call used no name: the next relu follows the one before it.
    n = int(repr(before)[len("<Symbol relu"):-1])
    assert repr(sym.relu(x)) == f"<Symbol relu{n + 1}>"
    g = nnvm.graph.create(sym.relu(x))
    for call, message in [
        (lambda: g.apply("NoSuchPass"), "unknown pass 'NoSuchPass'"),
        (lambda: g.apply(["InferShape", 3]), "Graph.apply takes pass names, got 3"),
        (lambda: nnvm.compiler.build(g, target="llvm"), "build: the shape of input 'x'"),
        (lambda: nnvm.compiler.build(g, target="llvm", shape={"q": (1,)}),
         "build: the graph has no input 'q'"),
        (lambda: nnvm.compiler.build(g, target="cuda", shape={"x": (1,)}),
         "target must be llvm (the host CPU), got 'cuda'"),
        (lambda: nnvm.compiler.build(g, shape={"x": (1,)}), "build: no target given"),
        (lambda: nnvm.compiler.build_config(opt_level=7), "build_config: opt_level must be"),
        (lambda: nnvm.compiler.build_config(opt=1), "build_config: unknown option 'opt'"),
        (lambda: sym.relu(object()), "relu: a value of type object cannot be given"),
        (lambda: g._set_json_attr("k", [1, "a"], "list_int"), ":setattr: list_int needs a list of"),
        (lambda: g._set_json_attr("k", 1, "list_float"), "unknown attribute type 'list_float'"),
        (lambda: nnvm.graph.create(3), "nnvm.graph.create takes a symbol, got int"),
        (lambda: unset_input_run(g), "run: no value for input 'x'"),
        (lambda: runtime_of(g).get_output(1), "get_output(1): the graph has 1 output"),
        (lambda: tvm.contrib.graph_runtime.create(g, None), "graph_runtime.create takes the"),
    ]:
        with pytest.raises(loupe.Error) as e:
            call()
        assert str(e.value).startswith(message), str(e.value)
    assert g.json_attr("k") is None


def test_a_replaced_graph_apply_sees_the_build_and_must_return_a_graph():
    x = sym.Variable("x")
    g = nnvm.graph.create(sym.relu(x))
    original = nnvm.graph.Graph.apply
    seen = []

    def recording(self, passes):
        seen.append(passes)
        return original(self, passes)

    try:
        nnvm.graph.Graph.apply = recording
        with tvm.target.create("llvm"):
            nnvm.compiler.build(g, shape={"x": (2,)})
        assert seen[-3:] == ["InferType", "GraphFusePartition", "GraphFuseCompile"]
        nnvm.graph.Graph.apply = lambda self, passes: 42
        with pytest.raises(loupe.Error, match=r"Graph.apply\(SaveJSON\) returned int, not a"):
            nnvm.compiler.build(g, target="llvm", shape={"x": (2,)})
    finally:
        nnvm.graph.Graph.apply = original


def test_the_readmes_example_runs_as_written():
    stdout = run_readme_block("import numpy as np\nfrom loupe import nnvm")
    last = stdout.strip().splitlines()[-1]
    assert [round(float(v), 5) for v in last.strip("[]").split()] == [0.75, 0.75, 0.75]
    assert "func_name='fuse__contrib_conv2d_NCHWc_relu'" in stdout
