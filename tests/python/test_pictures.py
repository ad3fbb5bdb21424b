"""Graphs draw themselves for notebooks: a well-formed SVG document with a box per node, an edge
per input, fusion groups as regions with their roots and masters, and names from a model as
text, never markup."""

import xml.etree.ElementTree as ET

import pytest

import loupe
import loupe.nnvm.symbol as sym
from loupe import nnvm

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg):
    root = ET.fromstring(svg)  # raises on anything that is not well-formed XML
    assert root.tag == SVG + "svg"
    return root


def test_a_partitioned_graph_draws_its_groups():
    x = sym.Variable("x", shape=(1, 3, 8, 8))
    y = sym.relu(sym.conv2d(data=x, channels=4, kernel_size=(3, 3), padding=(1, 1)))
    y = sym.flatten(y) * 2
    g = nnvm.graph.create(y).apply(["InferShape", "InferType", "GraphFusePartition"])
    root = parsed(g._repr_svg_())
    nodes = root.findall(SVG + "g")
    # x (the graph's input, a box of its own), conv2d (its weight and bias drawn inside, as the
    # viewer draws them), relu, flatten and __mul_scalar__.
    assert len(nodes) == 5
    titles = [n.find(SVG + "title").text for n in nodes]
    assert "conv2d\nconv2d" in "".join(titles)
    assert any(t.endswith("\n3×3 pad 1, 4 ch\n(1, 4, 8, 8)\n"
                          "conv2d0_weight (4, 3, 3, 3)\nconv2d0_bias (4,)") for t in titles)
    groups = [r for r in root.iter(SVG + "rect") if r.get("class") == "group"]
    # conv2d + relu is one group; flatten and the multiply fuse into another.
    assert len(groups) == 2
    group_titles = sorted(r.find(SVG + "title").text.split("\n")[0] for r in groups)
    assert group_titles == ["fuse_conv2d_relu", "fuse_flatten___mul_scalar__"]
    edges = [p for p in root.iter(SVG + "path") if p.get("marker-end")]
    assert len(edges) == 4  # x → conv2d → relu → flatten → __mul_scalar__


def test_a_session_draws_its_current_step_and_nothing_before_one():
    s = loupe.Session()
    assert s._repr_svg_() is None
    s.command('x = Variable("x", shape=(2, 3))')
    s.command("y = relu(x) + 1")
    s.graph("y")
    s.build()
    root = parsed(s.svg())
    # The input x, a box of its own, and the tvm_op with its function.
    assert [n.find(SVG + "title").text.split("\n") for n in root.findall(SVG + "g")] == [
        ["input", "x", "(2, 3) float32"],
        ["fuse_relu___add_scalar__", "__add_scalar__0", "(2, 3) float32"]]


def test_hostile_names_are_text():
    name = "<script>alert('x')</script>&<img src=x onerror=alert(1)>"
    g = nnvm.graph.create(sym.relu(sym.Variable(name)))
    svg = g._repr_svg_()
    assert "<script" not in svg and "<img" not in svg
    root = parsed(svg)
    texts = [t.text for t in root.iter(SVG + "text")]
    assert name in texts


def test_a_session_writes_its_report(tmp_path):
    s = loupe.Session()
    s.command('x = Variable("x", shape=(2, 3))')
    s.command("y = relu(x) + 1")
    s.graph("y")
    s.apply("InferShape")
    path = tmp_path / "r.html"
    said = s.report(path)
    assert said.startswith(f"wrote {path} (2 steps, ")
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<details class="step"') == 3
    with pytest.raises(loupe.Error, match="usage: :report FILE.html"):
        s.command(":report")
