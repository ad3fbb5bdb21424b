"""Seed 000 (what nnvm.compiler.build does) with only its import lines changed: In[2]'s
`import nnvm.compiler` and `import nnvm.symbol as sym` became the three lines below. Run with
    PYTHONPATH=build/python /usr/bin/python3 examples/python/seed000_build.py
It prints what the seed printed: the graph, every pass the build applies (through the replaced
Graph.apply) with the graph after it, and each function's loops as DEBUG log lines."""
# In[1]
import logging
import sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout)
logging.getLogger().setLevel(logging.DEBUG)

# In[2]
from loupe import nnvm
import loupe.nnvm.compiler
import loupe.nnvm.symbol as sym

# In[3]
x = sym.Variable("x")
w = sym.Variable("w")
b = sym.Variable("b")
z = sym.conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))
z = z + sym.conv2d(data=z, weight=w, bias=b, channels=3, kernel_size=(5,5), padding=[2,2])

compute_graph = nnvm.graph.create(z)

# In[4]
print(compute_graph.ir())

# In[5]
old_graph_apply = nnvm.graph.Graph.apply


# In[6]
def my_modified_graph_apply(self, passes):
    res = old_graph_apply(self, passes)
    # printing ir is also implemented as a pass, so we have to prevent an infinite loop
    if passes not in [["PrintGraphIR"], "PrintGraphIR"]:
        print("Applied passes " + str(passes))
        print(res.ir())
    return res

nnvm.graph.Graph.apply = my_modified_graph_apply

# In[7]
deploy_graph, lib, params = nnvm.compiler.build(
    compute_graph, target="llvm", shape={"x": (7,3,11,13)}, dtype="float32")
