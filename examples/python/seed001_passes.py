"""Seed 001 (NNVM's passes: the build, fusion's roots and masters, gradients) with only its import
lines changed: In[1]'s `import nnvm.compiler`, `import nnvm.symbol as sym` and `import tvm`, and
In[16]'s `from nnvm.compiler.graph_util import …`. Run with
    PYTHONPATH=build/python /usr/bin/python3 examples/python/seed001_passes.py
(as a script, the bare expression of In[10] shows nothing; a notebook shows the node table)."""
# In[1]
from loupe import nnvm, tvm
import loupe.nnvm.compiler
import loupe.nnvm.symbol as sym

# In[2]
x = sym.Variable("x")
w = sym.Variable("w")
b = sym.Variable("b")
z = sym.conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))
z = z + sym.conv2d(data=z, weight=w, bias=b, channels=3, kernel_size=(5,5), padding=[2,2])

compute_graph = nnvm.graph.create(z)

# In[3]
print(compute_graph.ir())

# In[4]
old_graph_apply = nnvm.graph.Graph.apply


# In[5]
def my_modified_graph_apply(self, passes):
    res = old_graph_apply(self, passes)
    # printing ir is also implemented as a pass, so we have to prevent an infinite loop
    if passes not in [["PrintGraphIR"], "PrintGraphIR", ["SaveJSON"], "SaveJSON"]:
        print("Applied passes " + str(passes))
        print(res.ir())
    return res

nnvm.graph.Graph.apply = my_modified_graph_apply

# In[6]
with nnvm.compiler.build_config(opt_level=2):
    deploy_graph, lib, params = nnvm.compiler.build(
        compute_graph, target="llvm", shape={"x": (7,3,11,13)}, dtype="float32")

# In[7]
# Let's return the function to its original state
nnvm.graph.Graph.apply = old_graph_apply

# In[8]
x = sym.Variable("x", shape=(1,13,100,100), dtype=1)
z = x
z = sym.conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1])
z = sym.relu(data=z)
z = sym.conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1])
z = sym.relu(data=z)
z = x + z
z = sym.flatten(z)
z = sym.dense(data=z, units=10)
z = sym.softmax(data=z)
# TODO: Doesn't work without keepdims which might be a bug in nnvm, investigate
z = sym.sum(z, keepdims=True)

graph = nnvm.graph.create(z)
print(graph.ir())

# In[9]
graph = graph.apply('InferShape').apply('InferType')

print("shapes of nodes: " + str(graph.json_attr('shape')))
print("types of nodes: " + str(graph.json_attr('dtype')))

# In[10]
graph.index.nodes

# In[11]
print("10th node:\t" + str(graph.index.nodes[10]))
print("and its shape:\t" + str(graph.json_attr('shape')[10]))

# In[12]
graph = graph.apply('GraphFusePartition')

# In[13]
print("roots: " + str(graph.json_attr('group_root')))
print("masters: " + str(graph.json_attr('group_master')))
print()

for n, r, m in zip(graph.index.nodes, graph.json_attr('group_root'), graph.json_attr('group_master')):
    print(n['name'] + 
          " has root " + (graph.index.nodes[r]['name'] if r >= 0 else "None") + 
          " and master " + (graph.index.nodes[m]['name'] if m >= 0 else "None"))

# In[14]
graph._set_json_attr("target", "llvm", "str")
with tvm.target.create("llvm"):
    compiled = graph.apply('GraphFuseCompile')

# In[15]
print(compiled.ir())

# In[16]
from loupe.nnvm.compiler.graph_util import gradients, get_gradient_graph

# In[17]
x = sym.Variable("x", shape=(1,13,100,100), dtype=1)
z = x
z = sym.conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1])
z = sym.relu(data=z)
z = sym.flatten(z)
z = sym.dense(data=z, units=10)
z = sym.softmax(data=z)
z = sym.sum(z, keepdims=True)

# In[18]
grad_graph = get_gradient_graph(z, x)
print(grad_graph.ir())

# In[19]
dz_dx = gradients(z, x)
# dz_dx is a list containing one symbol, so it looks a bit awckward
graph = nnvm.graph.create(nnvm.sym.Group([z] + dz_dx))
print(graph.ir())
