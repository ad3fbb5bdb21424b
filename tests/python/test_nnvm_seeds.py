"""Seeds 000 and 001 run from Python with only their import lines changed
(examples/python/seed000_build.py, seed001_passes.py) print what the seeds printed. The expected
texts below are the seeds' own prints, verbatim: attributes in the order NNVM's hash map iterated
them (core/AttrOrder), which the workbench derives from the same container."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "python")


def run_cells(name):
    """The output of an example's cells, run as a notebook runs them, in a fresh process (the
    node names count from zero, as in the seed's kernel)."""
    done = subprocess.run([sys.executable, os.path.join(HERE, "run_cells.py"),
                           os.path.join(EXAMPLES, name)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def applied_blocks(text):
    """(label, text after it) for each "Applied passes LABEL" line of a build's output."""
    chunks = text.split("Applied passes ")[1:]
    return [tuple(c.split("\n", 1)) for c in chunks]


# The seeds' first graph, as they print it again and again.
SEED_GRAPH = ("""Graph(%x, %w, %b) {
  %3 = conv2d(%x, %w, %b, kernel_size='(5, 5)', channels='3')
  %4 = conv2d(%3, %w, %b, channels='3', padding='[2, 2]', kernel_size='(5, 5)')
  %5 = broadcast_add(%3, %4)
  ret %5
}
""")
FIRST_GRAPH = SEED_GRAPH

# nnvm-spec §9's table of the seed-000 build: each Graph.apply call and its graph_attr_keys
# (None: the graph has none). The seed observed the first four and the last; the others' key sets
# come from the spec's Appendix A, whose order was a hash's, so they are compared as sets.
BUILD_CALLS = [
    ("SaveJSON", ["json"]),
    ("CorrectLayout", ["layout"]),
    ("SaveJSON", ["json"]),
    ("InferShape", ["shape_num_unknown_nodes", "layout", "shape"]),
    ("SaveJSON", ["json"]),
    ("['InferShape', 'SimplifyInference']", None),
    ("SaveJSON", ["json"]),
    ("InferShape", ["shape_num_unknown_nodes", "shape"]),
    ("SaveJSON", ["json"]),
    ("InferShape", ["shape", "opt_level", "target", "dtype_inputs", "shape_num_unknown_nodes"]),
    ("InferType", ["dtype_num_unknown_nodes", "dtype", "shape", "opt_level", "target",
                   "shape_num_unknown_nodes"]),
    ("GraphFusePartition", ["pattern", "group_master", "target", "group_root",
                            "shape_num_unknown_nodes", "dtype", "shape", "dtype_num_unknown_nodes"]),
    ("GraphFuseCompile", ["storage_id", "dtype", "dltype", "shape", "module"]),
]
OBSERVED = {0, 1, 2, 3, 12}


def keys_of(block):
    for line in block.splitlines():
        if line.startswith("graph_attr_keys = ["):
            return line[len("graph_attr_keys = ["):-1].split(", ")
    return None


def check_build(blocks, calls):
    assert [label for label, _ in blocks] == [label for label, _ in calls]
    for k, ((_, block), (_, keys)) in enumerate(zip(blocks, calls)):
        got = keys_of(block)
        if keys is None or k not in OBSERVED:
            assert (got and sorted(got)) == (keys and sorted(keys)), blocks[k]
        else:
            assert got == keys, blocks[k]


def test_seed000_build_prints_every_pass_and_logs_the_lowered_functions():
    out = run_cells("seed000_build.py")
    assert out.startswith(FIRST_GRAPH + "Applied passes SaveJSON\n")
    blocks = applied_blocks(out)
    check_build(blocks, BUILD_CALLS)
    # The seed's first four calls, as it printed them.
    save_json = "Applied passes SaveJSON\nGraph() {\n  ret \n}\ngraph_attr_keys = [json]\n\n"
    assert "Applied passes ".join([""] + ["%s\n%s" % b for b in blocks[:4]]) == (
        save_json + "Applied passes CorrectLayout\n" + SEED_GRAPH + "graph_attr_keys = [layout]\n\n"
        + save_json + "Applied passes InferShape\n" + SEED_GRAPH
        + "graph_attr_keys = [shape_num_unknown_nodes, layout, shape]\n\n")
    # Lowering logs each function at DEBUG level inside GraphFuseCompile, before its print; the
    # seed shows the start of fuse_conv2d_broadcast_add's loops.
    partition = blocks[11][1]
    assert "DEBUG:root:lower function fuse_conv2d\n" in partition
    assert ("""DEBUG:root:lower function fuse_conv2d_broadcast_add
DEBUG:root:// attr [pad_temp] storage_scope = "global"
allocate pad_temp[float32 * 7 * 3 * 11 * 13]
// attr [compute] storage_scope = "global"
allocate compute[float32 * 7 * 3 * 7 * 9]
produce pad_temp {
  parallel (i0.i1.fused, 0, 21) {
    for (i2, 0, 11) {
      for (i3, 0, 13) {
        pad_temp[((((i0.i1.fused*11) + i2)*13) + i3)] = tvm_if_then_else(((((2 <= i2) && (i2 < 9)) && (2 <= i3)) && (i3 < 11)), input0[(((((i0.i1.fused*7) + i2)*9) + i3) + -20)], 0.000000f)
      }
    }
  }
}
produce compute {
  parallel (nn.ff.fused, 0, 21) {
    for (yy.init, 0, 7) {
      for (xx.inner.init.s, 0, 16) {
        if (likely((xx.inner.init.s < 9))) {
          compute[((((nn.ff.fused*7) + yy.init)*9) + xx.inner.init.s)] = 0.000000f
        }
      }
    }
    for (rc, 0, 3) {
      for (yy, 0, 7) {
        for (xx.inner.s, 0, 16) {
          if (likely((xx.inner.s < 9))) {
            compute[((((nn.ff.fused*7) + yy)*9) + xx.inner.s)] = (c""") in partition
    assert blocks[12][1] == """Graph(%x, %w, %b) {
  %3 = tvm_op(%x, %w, %b, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_conv2d')
  %4 = tvm_op(%3, %w, %b, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_conv2d_broadcast_add')
  ret %4
}
graph_attr_keys = [storage_id, dtype, dltype, shape, module]

"""


SEED001_BUILD_START = (
    "Applied passes CorrectLayout\n" + SEED_GRAPH + "graph_attr_keys = [layout]\n\n"
    + "Applied passes InferShape\n" + SEED_GRAPH
    + "graph_attr_keys = [shape_num_unknown_nodes, layout, shape]\n\n"
    + "Applied passes ['InferShape', 'SimplifyInference']\n" + SEED_GRAPH
    + "Applied passes InferShape\n" + SEED_GRAPH[:SEED_GRAPH.index("%5 = broad") + 10])

# Seed 001 from In[8] on, every line as the seed printed it (In[10]'s node table is cut short in
# the seed, after the eighth node).
SEED001_FUSION = ("""Graph(%x,
      %conv2d2_weight,
      %conv2d2_bias,
      %conv2d3_weight,
      %conv2d3_bias,
      %dense0_weight,
      %dense0_bias) {
  %3 = conv2d(%x, %conv2d2_weight, %conv2d2_bias, channels='13', padding='[1, 1]', kernel_size='(3, 3)')
  %4 = relu(%3)
  %7 = conv2d(%4, %conv2d3_weight, %conv2d3_bias, channels='13', padding='[1, 1]', kernel_size='(3, 3)')
  %8 = relu(%7)
  %9 = broadcast_add(%x, %8)
  %10 = flatten(%9)
  %13 = dense(%10, %dense0_weight, %dense0_bias, units='10')
  %14 = softmax(%13)
  %15 = sum(%14, keepdims='True')
  ret %15
}
shapes of nodes: [[1, 13, 100, 100], [13, 13, 3, 3], [13], [1, 13, 100, 100], [1, 13, 100, 100], [13, 13, 3, 3], [13], [1, 13, 100, 100], [1, 13, 100, 100], [1, 13, 100, 100], [1, 130000], [10, 130000], [10], [1, 10], [1, 10], [1, 1]]
types of nodes: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
[{'attrs': {'dtype': '1', 'shape': '(1, 13, 100, 100)'},
  'inputs': [],
  'name': 'x',
  'op': 'null'},
 {'attrs': {'channels': '13', 'kernel_size': '(3, 3)', 'padding': '[1, 1]'},
  'inputs': [],
  'name': 'conv2d2_weight',
  'op': 'null'},
 {'attrs': {'channels': '13', 'kernel_size': '(3, 3)', 'padding': '[1, 1]'},
  'inputs': [],
  'name': 'conv2d2_bias',
  'op': 'null'},
 {'attrs': {'channels': '13', 'kernel_size': '(3, 3)', 'padding': '[1, 1]'},
  'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
  'name': 'conv2d2',
  'op': 'conv2d'},
 {'inputs': [[3, 0, 0]], 'name': 'relu0', 'op': 'relu'},
 {'attrs': {'channels': '13', 'kernel_size': '(3, 3)', 'padding': '[1, 1]'},
  'inputs': [],
  'name': 'conv2d3_weight',
  'op': 'null'},
 {'attrs': {'channels': '13', 'kernel_size': '(3, 3)', 'padding': '[1, 1]'},
  'inputs': [],
  'name': 'conv2d3_bias',
  'op': 'null'},
 {'attrs': {'channels': '13', 'kernel_size': '(3, 3)', 'padding': '[1, 1]'},
  'inputs': [[4, 0, 0], [5, 0, 0], [6, 0, 0]],
  """)

SEED001_GROUPS = """10th node:\t{'op': 'flatten', 'name': 'flatten0', 'inputs': [[9, 0, 0]]}
and its shape:\t[1, 130000]
roots: [0, 1, 2, 4, 4, 5, 6, 9, 9, 9, 10, 11, 12, 13, 14, 15]
masters: [-1, -1, -1, 3, 3, -1, -1, 7, 7, 7, 10, -1, -1, 13, 14, 15]

x has root x and master None
conv2d2_weight has root conv2d2_weight and master None
conv2d2_bias has root conv2d2_bias and master None
conv2d2 has root relu0 and master conv2d2
relu0 has root relu0 and master conv2d2
conv2d3_weight has root conv2d3_weight and master None
conv2d3_bias has root conv2d3_bias and master None
conv2d3 has root __add_symbol__1 and master conv2d3
relu1 has root __add_symbol__1 and master conv2d3
__add_symbol__1 has root __add_symbol__1 and master conv2d3
flatten0 has root flatten0 and master flatten0
dense0_weight has root dense0_weight and master None
dense0_bias has root dense0_bias and master None
dense0 has root dense0 and master dense0
softmax0 has root softmax0 and master softmax0
sum0 has root sum0 and master sum0
Graph(%x,
      %conv2d2_weight,
      %conv2d2_bias,
      %conv2d3_weight,
      %conv2d3_bias,
      %dense0_weight,
      %dense0_bias) {
  %3 = tvm_op(%x, %conv2d2_weight, %conv2d2_bias, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_conv2d_relu')
  %6 = tvm_op(%x, %3, %conv2d3_weight, %conv2d3_bias, num_outputs='1', num_inputs='4', flatten_data='0', func_name='fuse_conv2d_relu_broadcast_add')
  %7 = tvm_op(%6, num_outputs='1', num_inputs='1', flatten_data='0', func_name='fuse_flatten')
  %10 = tvm_op(%7, %dense0_weight, %dense0_bias, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_dense')
  %11 = tvm_op(%10, num_outputs='1', num_inputs='1', flatten_data='0', func_name='fuse_softmax')
  %12 = tvm_op(%11, num_outputs='1', num_inputs='1', flatten_data='0', func_name='fuse_sum')
  ret %12
}
graph_attr_keys = [storage_id, dtype, dltype, shape, module]

"""

GRADIENT_BODY = ("""Graph(%x,
      %conv2d4_weight,
      %conv2d4_bias,
      %dense1_weight,
      %dense1_bias) {
  %3 = conv2d(%x, %conv2d4_weight, %conv2d4_bias, channels='13', padding='[1, 1]', kernel_size='(3, 3)')
  %4 = relu(%3)
  %5 = flatten(%4)
  %8 = dense(%5, %dense1_weight, %dense1_bias, units='10')
  %9 = softmax(%8)
  %10 = sum(%9, keepdims='True')
  %11 = ones_like(%10)
  %12 = expand_like(%11, %9, exclude='0', axis='[]')
  %13 = elemwise_mul(%12, %9)
  %14 = sum(%13, keepdims='true', axis='-1')
  %15 = broadcast_mul(%14, %9)
  %16 = elemwise_sub(%13, %15)
  %17 = matmul(%16, %dense1_weight)
  %18 = reshape_like(%17, %4, ='')
  %19 = zeros_like(%3)
  %20 = greater(%3, %19, exclude='true')
  %21 = elemwise_mul(%18, %20)
  %22 = _conv2d_grad(%21, %x, %conv2d4_weight, channels='13', padding='[1, 1]', kernel_size='(3, 3)')
""")

SEED001_GRADIENTS = GRADIENT_BODY + "  ret %22.0\n}\n" + GRADIENT_BODY + "  ret %10, %22.0\n}\n"


@pytest.fixture(scope="module")
def seed001():
    return run_cells("seed001_passes.py")


def test_seed001_first_graph_and_build(seed001):
    assert seed001.startswith(FIRST_GRAPH + SEED001_BUILD_START)
    build = seed001[len(FIRST_GRAPH):seed001.index("Graph(%x,\n")]
    # The calls after the seed's cut, SaveJSON left out as the seed's replaced apply leaves it.
    check_build(applied_blocks(build), [c for c in BUILD_CALLS if c[0] != "SaveJSON"])


def test_seed001_fusion_roots_masters_and_compiled_graph(seed001):
    fusion = seed001[seed001.index("Graph(%x,\n"):]
    assert fusion.startswith(SEED001_FUSION)
    groups = fusion[fusion.index("10th node:"):]
    assert groups.startswith(SEED001_GROUPS)


def test_seed001_gradient_graphs(seed001):
    assert seed001.endswith(SEED001_GRADIENTS)


# Every line of seeds 000 and 001 that prints a node's attributes (verbatim, in the order NNVM's
# hash map gave them). The REPL's transcriptions of the seeds (sessions/seed000, seed001), which
# ctest replays, print each of them.
SEED_ATTRIBUTE_LINES = [
    "  %3 = conv2d(%x, %w, %b, kernel_size='(5, 5)', channels='3')",
    "  %4 = conv2d(%3, %w, %b, channels='3', padding='[2, 2]', kernel_size='(5, 5)')",
    "  %3 = tvm_op(%x, %w, %b, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_conv2d')",
    "  %4 = tvm_op(%3, %w, %b, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_conv2d_broadcast_add')",
    "  %3 = conv2d(%x, %conv2d2_weight, %conv2d2_bias, channels='13', padding='[1, 1]', kernel_size='(3, 3)')",
    "  %7 = conv2d(%4, %conv2d3_weight, %conv2d3_bias, channels='13', padding='[1, 1]', kernel_size='(3, 3)')",
    "  %13 = dense(%10, %dense0_weight, %dense0_bias, units='10')",
    "  %15 = sum(%14, keepdims='True')",
    "  %3 = tvm_op(%x, %conv2d2_weight, %conv2d2_bias, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_conv2d_relu')",
    "  %6 = tvm_op(%x, %3, %conv2d3_weight, %conv2d3_bias, num_outputs='1', num_inputs='4', flatten_data='0', func_name='fuse_conv2d_relu_broadcast_add')",
    "  %7 = tvm_op(%6, num_outputs='1', num_inputs='1', flatten_data='0', func_name='fuse_flatten')",
    "  %10 = tvm_op(%7, %dense0_weight, %dense0_bias, num_outputs='1', num_inputs='3', flatten_data='0', func_name='fuse_dense')",
    "  %11 = tvm_op(%10, num_outputs='1', num_inputs='1', flatten_data='0', func_name='fuse_softmax')",
    "  %12 = tvm_op(%11, num_outputs='1', num_inputs='1', flatten_data='0', func_name='fuse_sum')",
    "  %3 = conv2d(%x, %conv2d4_weight, %conv2d4_bias, channels='13', padding='[1, 1]', kernel_size='(3, 3)')",
    "  %8 = dense(%5, %dense1_weight, %dense1_bias, units='10')",
    "  %10 = sum(%9, keepdims='True')",
    "  %12 = expand_like(%11, %9, exclude='0', axis='[]')",
    "  %14 = sum(%13, keepdims='true', axis='-1')",
    "  %18 = reshape_like(%17, %4, ='')",
    "  %20 = greater(%3, %19, exclude='true')",
    "  %22 = _conv2d_grad(%21, %x, %conv2d4_weight, channels='13', padding='[1, 1]', kernel_size='(3, 3)')",
]


def test_the_repl_sessions_print_every_attribute_line_of_the_seeds():
    root = os.path.join(HERE, "..", "..", "sessions")
    text = ""
    for seed in ("seed000", "seed001"):
        folder = os.path.join(root, seed)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".session"):
                with open(os.path.join(folder, name)) as f:
                    text += f.read()
    missing = [line for line in SEED_ATTRIBUTE_LINES if line + "\n" not in text]
    assert not missing
