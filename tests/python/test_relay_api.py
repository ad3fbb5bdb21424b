"""loupe.relay and tvm.transform beyond seed 003's cells: values the passes compute (checked with
NumPy), the pass infrastructure's rules (relay-spec §1: levels, disabled and required passes,
instrument hooks and their order), passes written in Python, and one-line errors for what the
graph form cannot hold."""

import numpy as np
import pytest

import loupe
from loupe import relay, tvm
from readme_code import run_readme_block


def program(c_value=1.5):
    """Seed 003's example() with a known constant."""
    c = relay.const(np.full((1, 4, 6, 6), c_value, "float32"))
    weight = relay.var("weight", shape=(4, 4, 3, 3))
    x = relay.var("x", relay.TensorType((1, 4, 8, 8), "float32"))
    y = relay.add(relay.nn.conv2d(x, weight), relay.multiply(relay.add(c, c), relay.const(2.0)))
    return relay.Function([x, weight], relay.add(relay.add(y, c), relay.add(y, c)))


def constants(mod, scalars=False):
    """The values of the tensor constants @main reads (and of the scalars, if `scalars`), in the
    order it first reads them."""
    seen, out = set(), []
    stack = [mod["main"].body]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, relay.Constant) and (scalars or np.ndim(e.data)):
            out.append(e.data)
        if isinstance(e, relay.Call):
            stack.extend(reversed(e.args))
    return out


def test_fold_constant_computes_what_numpy_computes():
    mod = relay.transform.FoldConstant()(tvm.IRModule.from_expr(program(1.5)))
    values = sorted(float(v.flat[0]) for v in constants(mod))
    assert values == [1.5, (1.5 + 1.5) * 2]  # c itself, and add(c, c) * 2 folded
    assert all(v.shape == (1, 4, 6, 6) and v.dtype == np.float32 for v in constants(mod))


def test_a_pass_called_directly_ignores_levels_a_sequential_does_not():
    mod = relay.transform.FoldConstant()(tvm.IRModule.from_expr(program()))
    cse = relay.transform.EliminateCommonSubexpr()
    assert cse.info.opt_level == 3 and cse.info.required == ["InferType"]
    assert "add(%2, %2)" in str(cse(mod))  # at the default level 2, called directly: it runs
    seq = tvm.transform.Sequential([cse])
    assert "add(%2, %3)" in str(seq(mod))  # in a Sequential at level 2: skipped
    with tvm.transform.PassContext(opt_level=3):
        assert "add(%2, %2)" in str(seq(mod))
    with tvm.transform.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        assert "add(%2, %3)" in str(seq(mod))  # disabled wins


class Recorder(tvm.instrument.PassInstrument):
    """Writes every hook it hears to a shared log."""

    def __init__(self, tag, log, veto=()):
        self.tag, self.log, self.veto = tag, log, veto

    def enter_pass_ctx(self):
        self.log.append(f"{self.tag} enter")

    def exit_pass_ctx(self):
        self.log.append(f"{self.tag} exit")

    def should_run(self, mod, info):
        self.log.append(f"{self.tag} should_run {info.name}")
        return info.name not in self.veto

    def run_before_pass(self, mod, info):
        self.log.append(f"{self.tag} before {info.name}")

    def run_after_pass(self, mod, info):
        self.log.append(f"{self.tag} after {info.name}")


def test_instruments_hear_each_pass_in_list_order_and_can_veto():
    log = []
    mod = tvm.IRModule.from_expr(program())
    seq = tvm.transform.Sequential([relay.transform.FoldConstant()])
    with tvm.transform.PassContext(instruments=[Recorder("A", log), Recorder("B", log,
                                                                             ["FoldConstant"])]):
        assert log == ["A enter", "B enter"]
        out = seq(mod)
    # B vetoes FoldConstant: both should_run hooks are asked (no short-circuit), nothing runs.
    assert log[2:] == ["A should_run sequential", "B should_run sequential",
                       "A before sequential", "B before sequential",
                       "A should_run FoldConstant", "B should_run FoldConstant",
                       "A after sequential", "B after sequential", "A exit", "B exit"]
    assert str(out) == str(mod)
    log.clear()
    # A required pass runs without asking should_run.
    with tvm.transform.PassContext(instruments=[Recorder("A", log, ["FoldConstant"])],
                                   required_pass=["FoldConstant"]):
        relay.transform.FoldConstant()(mod)
    assert log == ["A enter", "A before FoldConstant", "A should_run InferType",
                   "A before InferType", "A after InferType", "A after FoldConstant", "A exit"]


def test_an_instrument_that_fails_to_enter_exits_those_entered_in_reverse():
    log = []

    class Broken(Recorder):
        def enter_pass_ctx(self):
            raise ValueError("cannot enter")

    ctx = tvm.transform.PassContext(instruments=[Recorder("A", log), Recorder("B", log),
                                                 Broken("C", log)])
    with pytest.raises(ValueError):
        with ctx:
            pass
    assert log == ["A enter", "B enter", "B exit", "A exit"]
    assert ctx.instruments == [] and tvm.transform.PassContext.current().opt_level == 2


def test_an_instrument_sees_a_pass_before_and_after():
    seen = []

    @tvm.instrument.pass_instrument
    class Watch:
        def run_after_pass(self, mod, info):
            seen.append((info.name, str(mod).count("meta[relay.Constant]")))

    with tvm.transform.PassContext(instruments=[Watch()]):
        relay.transform.FoldConstant()(tvm.IRModule.from_expr(program()))
    # FoldConstant's closing InferType nests inside it, so it is heard first.
    assert seen == [("InferType", 3), ("FoldConstant", 3)]


def test_a_function_pass_with_an_expr_mutator_rewrites_constants():
    @relay.transform.function_pass(opt_level=1)
    class Triple:
        def transform_function(self, func, mod, ctx):
            class ReplaceConstant(relay.ExprMutator):
                def visit_constant(self, c):
                    return relay.Constant(c.data * 3)  # the scalar 2 too: a rank-0 6

            return ReplaceConstant().visit(func)

    p = Triple()
    assert p.info.name == "Triple" and p.info.opt_level == 1
    mod = p(tvm.IRModule.from_expr(program(1.5)))
    # One c (used three times), and the scalar: the program's multiply(y, 2f) is now by 6f.
    assert sorted((np.ndim(v), float(v.flat[0])) for v in constants(mod, scalars=True)) == [
        (0, 6.0), (4, 4.5)]
    folded = relay.transform.FoldConstant()(mod)
    assert sorted(float(v.flat[0]) for v in constants(folded)) == [4.5, (4.5 + 4.5) * 6]


def test_scalars_alone_make_rank_0_tensors_that_fold():
    three, two = relay.const(3.0), relay.const(2.0)
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.add(x, relay.multiply(three, two))))
    typed = relay.transform.InferType()(mod)
    assert "multiply(3f /* ty=float32 */, 2f /* ty=float32 */) /* ty=float32 */" in str(typed)
    folded = relay.transform.FoldConstant()(mod)
    assert [(np.ndim(v), float(v)) for v in constants(folded, scalars=True)] == [(0, 6.0)]
    # A rank-0 parameter is a variable of shape ().
    s = relay.var("s", shape=())
    mod = tvm.IRModule.from_expr(relay.Function([s, x], relay.multiply(s, x)))
    assert str(relay.transform.InferType()(mod)) == (
        "def @main(%s: float32 /* ty=float32 */, %x: Tensor[(2), float32] /* ty=Tensor[(2), "
        "float32] */) -> Tensor[(2), float32] {\n"
        "  multiply(%s, %x) /* ty=Tensor[(2), float32] */\n}\n")


def test_an_identity_mutator_and_a_module_pass_keep_the_program():
    mod = tvm.IRModule.from_expr(program())
    again = tvm.IRModule.from_expr(relay.ExprMutator().visit(mod["main"]))
    assert str(again) == str(mod)

    @tvm.transform.module_pass(opt_level=0, name="Keep")
    def keep(m, ctx):
        assert ctx is tvm.transform.PassContext.current()
        return m

    assert keep.info.name == "Keep" and str(keep(mod)) == str(mod)


def test_pass_info_prints_as_tvm_printed_it():
    assert str(relay.transform.FuseOps().info) == (
        "The meta data of the pass - pass name: FuseOps, opt_level: 0, required passes: [\n"
        "InferType, ]\n")
    assert str(tvm.transform.Sequential().info) == (
        "The meta data of the pass - pass name: sequential, opt_level: 0, required passes: []\n")


def test_tvm_relay_is_loupe_relay():
    assert tvm.relay is relay and tvm.relay.ExprMutator is relay.ExprMutator


@pytest.mark.parametrize("make, message", [
    (lambda: tvm.IRModule.from_expr(relay.Function([], relay.nn.relu(relay.var("z", shape=(2,))))),
     "relay.Function: %z is free (not a parameter)"),
    (lambda: tvm.IRModule.from_expr(relay.Function(
        [relay.var("a", shape=(2,)), relay.var("b", shape=(2,))], relay.var("a", shape=(2,)))),
     "relay.Function: %a is free (not a parameter)"),
    (lambda: tvm.IRModule.from_expr(relay.nn.conv2d(
        relay.var("x", shape=(1, 1, 4, 4)), relay.var("w", shape=(1, 1, 3, 3)),
        padding=(1, 0, 0, 1))),
     "relay.nn.conv2d: padding [1, 0, 0, 1] is asymmetric, which NNVM's conv2d cannot express"),
    (lambda: tvm.IRModule.from_expr(relay.nn.conv2d(
        relay.var("x", shape=(1, 1, 4, 4)), relay.nn.relu(relay.var("w", shape=(1, 1, 3, 3))))),
     "relay.nn.conv2d: the weight's shape must be known (a typed relay.var or a constant)"),
    (lambda: relay.transform.FuseOps()(
        tvm.IRModule.from_expr(relay.nn.relu(relay.var("x", shape=(2,))))),
     "FuseOps: the module is not typed; run relay.transform.InferType() first"),
    (lambda: relay.transform.FuseOps(fuse_opt_level=7)(relay.transform.InferType()(
        tvm.IRModule.from_expr(relay.nn.relu(relay.var("x", shape=(2,)))))),
     "FuseOps: fuse_opt_level must be an integer from -1 to 3, got '7'"),
    (lambda: relay.transform.SimplifyInference(depth=2),
     "SimplifyInference has no option 'depth'"),
    (lambda: relay.transform.FoldConstant()("not a module"),
     "FoldConstant: expected an IRModule, got str"),
    (lambda: tvm.transform.PassContext(config={"relay.FuseOps.depth": 3}),
     "Invalid config option 'relay.FuseOps.depth' candidates are: relay.FuseOps.max_depth"),
    (lambda: relay.const(1j), "relay.const: 1j is not a real number"),
    (lambda: tvm.IRModule()["main"], "IRModule: the module has no @main"),
])
def test_bad_programs_raise_one_line_errors(make, message):
    with pytest.raises(loupe.Error) as e:
        make()
    assert str(e.value) == message


def test_a_failing_python_pass_leaves_the_module_as_it_was():
    mod = tvm.IRModule.from_expr(program())
    before = str(mod)

    @relay.transform.function_pass(opt_level=0)
    def broken(func, mod, ctx):
        return relay.multiply(relay.const(1.0), relay.const(2.0))

    with pytest.raises(loupe.Error, match="a function pass returned Call, not a relay.Function"):
        broken(mod)
    assert str(mod) == before


def test_the_readme_relay_example_prints_one_primitive_function():
    stdout = run_readme_block("from loupe import relay, tvm")
    assert stdout.count("Primitive=1") == 1
    assert "    add(%0, %p0) /* ty=Tensor[(1, 64, 56, 56), float32] */\n" in stdout


def test_an_instrument_that_raises_stops_the_run_and_leaves_the_module():
    class Refuse(tvm.instrument.PassInstrument):
        def run_before_pass(self, mod, info):
            if info.name == "EliminateCommonSubexpr":
                raise KeyError(info.name)

    mod = tvm.IRModule.from_expr(program())
    before = str(mod)
    seq = tvm.transform.Sequential([relay.transform.FoldConstant(),
                                    relay.transform.EliminateCommonSubexpr()], opt_level=0)
    with tvm.transform.PassContext(opt_level=3, instruments=[Refuse()]):
        with pytest.raises(KeyError, match="EliminateCommonSubexpr"):
            seq(mod)
    assert str(mod) == before
