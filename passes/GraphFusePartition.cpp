// GraphFusePartition: assigns every node a fusion group (root) and master from op patterns
// and shapes; writes `group_root`, `group_master` and `pattern` (one int per node).
//
// Algorithm A (NNVM at the seed's date, nnvm-spec §5), the default:
//  * ref[n] counts input slots that read n, plus 2 per graph output that is n.
//  * Phase 1, ids ascending. An elementwise/broadcast node absorbs producers whose pattern is
//    ≤ injective, and at most one same-shape OutEWiseFusable producer, whose master it takes;
//    its derived pattern is OutEWiseFusable if it took a master, ElemWise if every input was
//    elementwise with its own shape, else Broadcast. Injective and reduce nodes absorb only
//    producers ≤ injective (a reduce is its own master). OutEWiseFusable and opaque nodes absorb
//    nothing and are their own masters; their producers become their own masters if unset.
//    A node read more than once, or any node when opt_level < 1, is realized (ends a group).
//  * Phase 2, ids descending: an unassigned node is a root; producers marked fuse-to-master
//    join its group.
// Algorithm B adds phase 3 (diamond fusion: a node whose single-input consumers all sit in one
// elementwise group joins it). Algorithm C keeps injective producers out of conv-master groups.
// `:set nofuse OP` treats OP as opaque. opt_level comes from the graph attribute (consumed),
// else from the pass context.
#include "passes/Fusion.h"
#include "passes/Pass.h"

#include "core/DType.h"
#include "core/Error.h"

namespace loupe {

namespace {

enum Fuse { kUnknown, kFuseToMaster, kRealize };

std::string nm(const IndexedGraph &idx, uint32_t nid) { return idx.nodes[nid].node->name; }

} // namespace

PartitionResult partitionGraph(const Graph &g, int optLevel, const std::string &rules,
                               const std::set<std::string> &noFuse) {
  if (rules != "A" && rules != "B" && rules != "C")
    fail("GraphFusePartition: fusion_rules must be A, B or C, got '", rules, "'");
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  uint32_t n = idx.numNodes();
  PartitionResult res;
  auto &why = res.why;

  auto registered = [&](uint32_t nid) {
    const Node &node = *idx.nodes[nid].node;
    if (node.isVariable())
      return static_cast<int>(kOpaque);
    return noFuse.count(node.op->name) ? static_cast<int>(kOpaque) : node.op->pattern;
  };
  auto patternOf = [&](uint32_t nid) {
    std::string s = patternName(registered(nid));
    if (!idx.nodes[nid].node->isVariable() && noFuse.count(idx.nodes[nid].node->op->name))
      s += " (nofuse)";
    return s;
  };
  std::vector<std::string> realizedBecause(n);
  auto entryShape = [&](const IndexedGraph::Entry &e) -> const Shape & {
    return shapes[idx.entryId(e)];
  };

  std::vector<int> ref(n, 0);
  for (uint32_t nid = 0; nid < n; ++nid)
    for (const auto &e : idx.nodes[nid].inputs)
      ++ref[e.nodeId];
  for (const auto &h : idx.heads)
    ref[h.nodeId] += 2;

  std::vector<Fuse> fuse(n, kUnknown);
  std::vector<int> pattern(n, kOpaque), master(n, -1);
  // The reason an already-decided producer gives every later reader.
  auto known = [&](uint32_t p, uint32_t c) {
    if (!why.count({p, c}))
      why[{p, c}] = idx.nodes[p].node->isVariable() ? "cut: variables are never fused"
                                                    : "cut: " + realizedBecause[p];
  };
  // opt_level 3: a consumer that already took one OutEWiseFusable producer's master cuts the
  // chain of another (p, back to its master) at that chain's narrowest value instead of at p —
  // a residual add's second convolution stores its 8-bit steps, not the int32 or float32 values
  // the add widens them to (4x the bytes written and read back) — and takes the chain's nodes
  // after that value as producers without a master. False (nothing changed) when p itself is
  // the narrowest.
  const GraphAttr *dtypes = g.attr("dtype");
  auto bytesOf = [&](uint32_t nid) {
    return dtypeBytes(static_cast<int>(dtypes->ints[idx.entryId(nid, 0)]));
  };
  auto narrowCut = [&](uint32_t p, uint32_t consumer, int chosen) {
    if (optLevel < 3 || !dtypes)
      return false;
    std::vector<uint32_t> chain; // p, then back towards its master (exclusive)
    for (uint32_t at = p; static_cast<int>(at) != master[p];) {
      chain.push_back(at);
      int next = -1;
      for (const auto &e : idx.nodes[at].inputs)
        if (master[e.nodeId] == master[p] && fuse[e.nodeId] == kFuseToMaster)
          next = static_cast<int>(e.nodeId);
      if (next == -1 || idx.nodes[at].node->numOutputs() != 1)
        return false;
      at = static_cast<uint32_t>(next);
    }
    size_t cut = 0; // the chain's narrowest value, the earliest of equals
    for (size_t k = 1; k < chain.size(); ++k)
      if (bytesOf(chain[k]) <= bytesOf(chain[cut]))
        cut = k;
    if (cut == 0 || bytesOf(chain[cut]) >= bytesOf(p))
      return false;
    uint32_t w = chain[cut];
    fuse[w] = kRealize;
    realizedBecause[w] = cat(nm(idx, w), " is the narrowest value on the way to ",
                             nm(idx, consumer), ", which took the master ", nm(idx, chosen));
    why[{w, chain[cut - 1]}] = cat("cut: ", realizedBecause[w], " (opt_level 3)");
    for (size_t k = 0; k < cut; ++k) {
      uint32_t c = chain[k];
      master[c] = -1;
      pattern[c] = registered(c) == kElemWise ? kElemWise : kBroadcast;
    }
    return true;
  };
  for (uint32_t nid = 0; nid < n; ++nid) {
    const auto &in = idx.nodes[nid];
    if (in.node->isVariable()) {
      fuse[nid] = kRealize;
      continue;
    }
    int pt = registered(nid);
    std::string me = nm(idx, nid);
    if (pt <= kBroadcast) {
      int chosen = -1;
      // broadcast_to's target shape is an attribute of the output's rank, so its function
      // cannot take its data flattened to one axis even where the shapes are equal (an
      // exporter's Expand of a constant to its own shape; found on PyTorch's RNN exports).
      bool ewise = in.node->numOutputs() == 1 && in.node->op->name != "broadcast_to",
           injectiveIn = false;
      const Shape &out0 = shapes[idx.entryId(nid, 0)];
      for (const auto &e : in.inputs) {
        uint32_t p = e.nodeId;
        std::string pn = nm(idx, p), pp = patternName(pattern[p]);
        if (fuse[p] == kUnknown) {
          if (pattern[p] != kElemWise)
            ewise = false;
          if (pattern[p] <= kInjective) {
            fuse[p] = kFuseToMaster;
            injectiveIn |= pattern[p] == kInjective;
            why[{p, nid}] = cat("fused: ", me, " (", patternOf(nid), ") absorbs producers whose ",
                                "pattern is at most Injective, and ", pn, " is ", pp);
          } else if (pattern[p] == kOutEWiseFusable && chosen == -1 && out0 == entryShape(e)) {
            chosen = master[p];
            fuse[p] = kFuseToMaster;
            why[{p, nid}] = cat("fused: ", me, " (", patternOf(nid), ") absorbs one ",
                                "OutEWiseFusable producer of its own shape and takes its master ",
                                nm(idx, chosen));
          } else if (pattern[p] == kOutEWiseFusable && chosen != -1 && narrowCut(p, nid, chosen)) {
            fuse[p] = kFuseToMaster;
            why[{p, nid}] = cat("fused: ", me, " absorbed an OutEWiseFusable producer (master ",
                                nm(idx, chosen), "), so ", pn,
                                "'s chain joins it from its narrowest value (opt_level 3)");
          } else {
            fuse[p] = kRealize;
            if (pattern[p] == kOutEWiseFusable && chosen != -1)
              why[{p, nid}] = cat("cut: ", me, " already absorbed an OutEWiseFusable producer ",
                                  "(master ", nm(idx, chosen), "); it can absorb only one");
            else if (pattern[p] == kOutEWiseFusable)
              why[{p, nid}] = cat("cut: shapes differ: ", pn, " gives ", shapeToList(entryShape(e)),
                                  " but ", me, " produces ", shapeToList(out0),
                                  "; an OutEWiseFusable producer is absorbed "
                                  "only with the same shape");
            else
              why[{p, nid}] = cat("cut: ", pn, " is ", pp, ", which an elementwise consumer (", me,
                                  ", ", patternOf(nid), ") cannot absorb");
          }
        } else {
          known(p, nid);
        }
        if (ewise && out0 != entryShape(e))
          ewise = false;
      }
      master[nid] = chosen;
      if (chosen != -1)
        pt = kOutEWiseFusable;
      else if (rules == "C" && injectiveIn)
        pt = kInjective;
      else
        pt = ewise ? kElemWise : kBroadcast;
    } else if (pt == kInjective || pt == kCommReduce) {
      for (const auto &e : in.inputs) {
        uint32_t p = e.nodeId;
        if (fuse[p] != kUnknown) {
          known(p, nid);
          continue;
        }
        bool ok = pattern[p] <= kInjective;
        fuse[p] = ok ? kFuseToMaster : kRealize;
        why[{p, nid}] = cat(ok ? "fused: " : "cut: ", me, " (", patternOf(nid),
                            ") absorbs only producers whose pattern is at most Injective, and ",
                            nm(idx, p), " is ", patternName(pattern[p]));
      }
      if (pt == kCommReduce)
        master[nid] = static_cast<int>(nid);
    } else {
      master[nid] = static_cast<int>(nid);
      for (const auto &e : in.inputs) {
        uint32_t p = e.nodeId;
        if (fuse[p] != kUnknown) {
          known(p, nid);
          continue;
        }
        fuse[p] = kRealize;
        why[{p, nid}] = cat("cut: ", me, " is ", patternOf(nid), " and absorbs no producer");
        if (master[p] == -1)
          master[p] = static_cast<int>(p);
      }
    }
    pattern[nid] = pt;
    if (ref[nid] > 1 || optLevel < 1) {
      fuse[nid] = kRealize;
      if (master[nid] == -1)
        master[nid] = static_cast<int>(nid);
      realizedBecause[nid] =
          optLevel < 1 ? cat("opt_level ", optLevel, " < 1 keeps every op alone")
          : ref[nid] >= 2 && std::any_of(idx.heads.begin(), idx.heads.end(),
                                         [&](const auto &h) { return h.nodeId == nid; })
              ? cat(me, " is a graph output, so it ends its group")
              : cat(me, " has ", ref[nid], " readers, so it ends its group");
    }
  }

  // Phase 2: roots, ids descending.
  std::vector<int> group(n, -1);
  std::vector<std::vector<uint32_t>> members(n); // rule C/B: root first, then in pull order
  for (uint32_t nid = n; nid-- > 0;) {
    if (group[nid] == -1) {
      group[nid] = static_cast<int>(nid);
      members[nid].push_back(nid);
    }
    const auto &in = idx.nodes[nid];
    bool split = false; // rule C: this node holds both a conv-like and an injective producer
    if (rules == "C") {
      bool hasOut = false, hasInj = false;
      for (const auto &e : in.inputs)
        if (fuse[e.nodeId] == kFuseToMaster) {
          hasOut |= pattern[e.nodeId] == kOutEWiseFusable;
          hasInj |= pattern[e.nodeId] == kInjective;
        }
      split = hasOut && hasInj;
      if (split) {
        master[nid] = static_cast<int>(nid);
        if (group[nid] != static_cast<int>(nid))
          for (uint32_t m : members[group[nid]])
            master[m] = static_cast<int>(nid);
      }
    }
    for (const auto &e : in.inputs) {
      uint32_t p = e.nodeId;
      if (fuse[p] != kFuseToMaster)
        continue;
      if (split && pattern[p] == kOutEWiseFusable) {
        why[{p, nid}] = cat("cut by rule C: ", nm(idx, nid),
                            " has both an OutEWiseFusable and "
                            "an Injective producer, so the OutEWiseFusable one keeps its group");
        continue; // rule C: the conv group stays apart
      }
      if (group[p] != -1 && group[p] != group[nid])
        fail("GraphFusePartition: internal error: node ", idx.nodes[p].node->name,
             " is pulled into two groups");
      group[p] = group[nid];
      members[group[nid]].push_back(p);
      if (split && pattern[p] == kInjective)
        master[p] = static_cast<int>(nid);
    }
  }

  // Phase 3 (rules B and C): diamond fusion.
  if (rules != "A" && optLevel >= 1) {
    std::vector<std::vector<int>> children(n);
    for (uint32_t c = n; c-- > 1;) {
      const auto &in = idx.nodes[c];
      if (!in.node->isVariable() && in.inputs.size() == 1 && ref[in.inputs[0].nodeId] > 1)
        children[in.inputs[0].nodeId].push_back(group[c]);
    }
    std::vector<std::vector<uint32_t>> opMembers(n);
    for (uint32_t m = 0; m < n; ++m)
      if (!idx.nodes[m].node->isVariable())
        opMembers[group[m]].push_back(m);
    std::vector<int> newGroup(n, -1);
    for (uint32_t v = n; v-- > 1;) {
      if (newGroup[group[v]] != -1)
        group[v] = newGroup[group[v]];
      if (idx.nodes[v].node->isVariable() || registered(v) == kOpaque || children[v].size() < 2)
        continue;
      int g0 = children[v][0];
      bool same = true;
      for (int c : children[v])
        same &= c == g0;
      if (!same)
        continue;
      bool elementwise = true;
      for (uint32_t m : opMembers[g0])
        elementwise &= registered(m) <= kBroadcast;
      if (!elementwise)
        continue;
      newGroup[group[v]] = g0;
      group[v] = g0;
      for (uint32_t c = v + 1; c < n; ++c)
        for (const auto &e : idx.nodes[c].inputs)
          if (e.nodeId == v && group[c] == g0)
            why[{v, c}] = cat("fused by rule B (diamond): every single-input reader of ",
                              nm(idx, v), " is in the elementwise group of ", nm(idx, g0));
      for (uint32_t m : opMembers[g0]) {
        pattern[m] = pattern[v];
        master[m] = master[v];
      }
    }
  }

  res.root = std::move(group);
  res.master = std::move(master);
  res.pattern = std::move(pattern);
  return res;
}

namespace {

Graph partition(const Graph &src, const PassContext &ctx) {
  Graph g = src;
  int optLevel = ctx.optLevel;
  if (const GraphAttr *o = g.attr("opt_level")) {
    optLevel = static_cast<int>(o->num);
    g.attrs.erase("opt_level");
  }
  PartitionResult r = partitionGraph(g, optLevel, ctx.get("fusion_rules", "A"), ctx.noFuse);
  auto toList = [](const std::vector<int> &v) {
    return GraphAttr::listInt(std::vector<int64_t>(v.begin(), v.end()));
  };
  g.attrs["group_root"] = toList(r.root);
  g.attrs["group_master"] = toList(r.master);
  g.attrs["pattern"] = toList(r.pattern);
  return g;
}

} // namespace

void registerGraphFusePartitionPass() {
  PassRegistry::get().add(
      {.name = "GraphFusePartition",
       .summary = "groups nodes into fused kernels (roots and masters) from op patterns",
       .optLevel = 0, // always runs; opt_level < 1 makes every op its own group
       .needs = {"shape", "dtype"},
       .provides = {"group_root", "group_master", "pattern"},
       .run = partition,
       .required = {"InferShape", "InferType"}, // in a pipeline, as FuseOps needs types
       .options = {"fusion_rules"}});
}

} // namespace loupe
