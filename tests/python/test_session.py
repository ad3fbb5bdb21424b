"""The loupe Python package: a session drives the REPL's engine; runs return NumPy arrays checked
against NumPy here; groups and profiles come back as rows; every failure is a loupe.Error with
the REPL's one-line message and the session unchanged."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loupe

PROGRAM = [
    'x = Variable("x", shape=(2, 3), dtype=0)',
    'w = Variable("w", shape=(2, 3), dtype=0)',
    "y = relu(x * 2 + w) + 1",
]


def built(opt_level=2):
    s = loupe.Session()
    for line in PROGRAM:
        s.command(line)
    s.graph("y")
    s.build(opt_level=opt_level)
    return s


@pytest.mark.parametrize("opt_level", [0, 2, 3])
def test_run_returns_arrays_that_numpy_agrees_with(opt_level):
    s = built(opt_level)
    x = np.array([[1.5, -2, 0.25], [3, -0.5, 4]], "float32")
    w = np.array([[-1, 5, 0], [-7, 0.5, -8.5]], "float32")
    out = s.run(check=True, x=x, w=w)
    assert out.names == ["__add_scalar__0"]  # the node's name, as :outputs lists it
    assert "__add_scalar__0" in s.command(":outputs")
    assert len(out) == 1
    assert out[0].dtype == np.float32 and out[0].shape == (2, 3)
    np.testing.assert_array_equal(out[0], np.maximum(x * 2 + w, 0) + 1)
    np.testing.assert_array_equal(out.reference[0], out[0])
    assert out.max_abs_error() == 0.0


def test_a_bfloat16_output_comes_back_as_its_float32_values():
    s = loupe.Session()
    s.command('x = Variable("x", shape=(3,), dtype=0)')
    s.command('y = cast(x, dtype="bfloat16")')
    s.graph("y")
    s.build()
    out = s.run(x=np.array([1 + 2**-8, 1 + 3 * 2**-8, 0.1], "float32"))
    assert out[0].dtype == np.float32
    # Rounded to nearest, ties to even: 1 + 2^-8 down to 1, 1 + 3·2^-8 up to 1 + 2^-6; 0.1 is
    # 0x3dcccccd in float32 and 0x3dcd in bfloat16.
    bits = np.array([0x3DCD0000], "uint32").view("float32")[0]
    np.testing.assert_array_equal(out[0], np.array([1, 1 + 2**-6, bits], "float32"))


def test_inputs_not_given_are_filled_as_run_fills_them_and_check_is_off_unless_asked():
    s = built()
    a = s.run(seed=3, x=np.zeros((2, 3), "float32"))
    b = s.run(seed=3, check=False, x=np.zeros((2, 3), "float32"))
    c = s.run(seed=4, check=False, x=np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(a[0], b[0])  # w random from the seed, the same twice
    assert not np.array_equal(a[0], c[0])
    assert a.reference == [] and a.max_abs_error() is None
    # A float64 array is rounded to the input's float32, as :run converts a file.
    d = s.run(x=np.full((2, 3), 0.1, "float64"), w=np.zeros((2, 3), "float32"))
    assert d[0][0, 0] == np.float32(0.1) * np.float32(2) + np.float32(1)


def test_errors_carry_the_repl_message_and_change_nothing():
    s = built()
    before = s.steps()
    with pytest.raises(loupe.Error) as e:
        s.apply("NoSuchPass")
    assert "NoSuchPass" in str(e.value) and "\n" not in str(e.value)
    assert not str(e.value).startswith("error:")
    with pytest.raises(loupe.Error, match=r"^run: input 'x' has shape \(3,\) but the graph takes \(2, 3\)$"):
        s.run(x=np.zeros(3, "float32"))
    with pytest.raises(loupe.Error, match="^run: the graph has no input 'z'"):
        s.run(z=np.zeros((2, 3), "float32"))
    with pytest.raises(loupe.Error, match="NumPy dtype complex64"):
        s.run(x=np.zeros((2, 3), "complex64"))
    with pytest.raises(loupe.Error):
        s.command("y = relu(")
    assert s.steps() == before
    s.graph("y")
    with pytest.raises(loupe.Error, match="^the current graph was not built; run :build first$"):
        s.run()


def test_groups_are_rows_of_the_partition():
    s = loupe.Session()
    for line in PROGRAM:
        s.command(line)
    s.graph("y")
    s.apply("InferShape", "InferType", "GraphFusePartition")
    g = s.groups()
    assert g["opt_level"] is None and g["rules"] is None
    # One elementwise group: every op's root is the last add; the variables are their own.
    roots = {n["node"]: n["root"] for n in g["nodes"]}
    assert roots["x"] == "x" and roots["w"] == "w"
    ops = [n for n in roots if n not in ("x", "w")]
    assert len(ops) == 4 and len({roots[n] for n in ops}) == 1
    (grp,) = [grp for grp in g["groups"] if len(grp["members"]) > 1]
    assert sorted(grp["members"]) == sorted(ops)
    assert grp["pattern"] == "ElemWise" and grp["master"] == grp["root"]
    assert grp["function"].startswith("fuse_")
    b = built(opt_level=2)
    assert b.groups()["opt_level"] == 2 and b.groups()["rules"] == "A"


def test_profile_rows_name_each_kernel():
    s = built()
    rows = s.profile(runs=3)
    assert [r["kernel"] for r in rows] == ["fuse___mul_scalar___broadcast_add_relu___add_scalar__"]
    assert rows[0]["ms"] > 0 and rows[0]["gflops"] >= 0
    # The median of three runs lies between the fastest and the slowest.
    assert rows[0]["min_ms"] <= rows[0]["ms"] <= rows[0]["max_ms"]


def test_steps_and_undo():
    s = built()
    assert s.steps() == ["graph y", "build opt_level=2"]
    assert s.cursor == 1
    s.undo()
    assert s.cursor == 0


def test_an_interpreter_without_numpy_fails_at_import_naming_the_one_it_was_built_for():
    # numpy set to None in sys.modules is what an interpreter without NumPy meets: its import
    # raises ImportError.
    code = "import sys; sys.modules['numpy'] = None\nimport loupe"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(
                              loupe.__file__))})
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last == (f"ImportError: loupe needs NumPy, which {sys.executable} cannot import; the "
                    f"module was built for {loupe.built_for_python} (run "
                    f"PYTHONPATH=build/python {loupe.built_for_python})")


def test_a_dynamic_build_runs_the_variant_of_the_arrays_sizes():
    s = loupe.Session()
    s.command('x = Variable("x", shape="(batch, 3)", dtype=0)')
    s.command('w = Variable("w", shape="(batch, 3)", dtype=0)')
    s.command("y = relu(x * 2 + w) + 1")
    s.graph("y")
    assert "dynamic: size symbols batch" in s.build(opt_level=3)
    for rows in (2, 5):
        x = np.arange(rows * 3, dtype="float32").reshape(rows, 3) - 4
        w = np.full((rows, 3), -0.5, "float32")
        out = s.run(x=x, w=w)
        assert out[0].shape == (rows, 3)
        np.testing.assert_array_equal(out[0], np.maximum(x * 2 + w, 0) + 1)
    with pytest.raises(loupe.Error, match="gives batch=3 .* gives batch=2|gives batch=2 .* gives batch=3"):
        s.run(x=np.zeros((2, 3), "float32"), w=np.zeros((3, 3), "float32"))
    # profile takes sizes too: that size's variant is profiled and becomes the current step.
    rows = s.profile(2, batch=7)
    assert [r["kernel"] for r in rows] and all(r["ms"] >= 0 for r in rows)
    assert s.steps()[-1] == "variant batch=7"
    with pytest.raises(loupe.Error, match="batch must be a positive integer, got '0'"):
        s.profile(1, batch=0)


def test_a_dynamic_build_exports_the_sizes_asked_for(tmp_path):
    s = loupe.Session()
    s.command('x = Variable("x", shape="(batch, 3)", dtype=0)')
    s.command("y = relu(x * 2) + 1")
    s.graph("y")
    s.build(opt_level=3)
    files = s.export(tmp_path / "out", batch=[2, 6])
    assert files == ["deploy.0.json", "deploy.1.json", "deploy.so", "deploy.h"]
    header = (tmp_path / "out" / "deploy.h").read_text()
    assert "#define LOUPE_NUM_VARIANTS 2\n/* Variant 0, built for batch=2 (loupe_create" in header
    assert " * Variant 1, built for batch=6:\n * Inputs:\n *   x: float32 (6, 3)\n" in header
    with pytest.raises(loupe.Error, match="'seq=2' is not SYMBOL=N"):
        s.export(tmp_path / "other", seq=2)
