"""Quantizing in the workbench from Python: Session.quantize makes the QDQ step :quantize makes,
and Session.layerwise returns :layerwise's figures as rows — the same numbers the REPL prints,
with inputs given as NumPy arrays or made from the seed."""
import math

import numpy as np
import pytest

import loupe


def quantized_mlp():
    s = loupe.Session()
    s.model("mlp")
    text = s.quantize(samples=2, skip=["fc3"])
    assert text == ("quantized 2 layers (int8 weights per channel, uint8 activations calibrated "
                    "on 2 samples); kept float: fc3\n")
    s.apply("InferShape", "InferType", "FakeQuantizationToInteger")
    return s


def test_layerwise_rows_are_the_repls_figures():
    s = quantized_mlp()
    rows = s.layerwise(0, 2)
    by_node = {r["node"]: r for r in rows}
    assert set(by_node) == {"flatten0", "fc1", "fc2", "fc3", "softmax"}
    assert by_node["fc1"]["op"] == "qnn.dense" and by_node["fc1"]["dequantized"]
    assert math.isinf(by_node["flatten0"]["sqnr_db"]) and by_node["flatten0"]["max_abs"] == 0
    # The REPL's table, one decimal, worst first: the same values.
    table = s.command(":layerwise 0 2").splitlines()[2:]
    printed = {line.split()[0]: line.split()[2] for line in table}
    for node, r in by_node.items():
        want = "inf" if math.isinf(r["sqnr_db"]) else f"{r['sqnr_db']:.1f}"
        assert printed[node] == want, node


def test_layerwise_takes_arrays_and_refuses_what_is_not_there():
    s = quantized_mlp()
    x = np.linspace(-1, 1, 784, dtype="float32").reshape(1, 1, 28, 28)
    a = s.layerwise(0, 2, data=x)
    b = s.layerwise(0, 2, data=x.astype("float64"))  # converted to the input's float32
    assert [r["sqnr_db"] for r in a] == [r["sqnr_db"] for r in b]
    assert a != s.layerwise(0, 2)  # the seed's random input differs
    with pytest.raises(loupe.Error, match="^layerwise: neither step has an input 'nope'$"):
        s.layerwise(0, 2, nope=x)
    with pytest.raises(loupe.Error, match="^layerwise: input 'data' has shape"):
        s.layerwise(0, 2, data=x[0])
    with pytest.raises(loupe.Error, match="^no step 9"):
        s.layerwise(0, 9)
