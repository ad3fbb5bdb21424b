"""Seed 003 (How to Use TVM Pass Infra) run from Python with only its import lines changed
(examples/python/seed003_pass_infra.py) prints the seed's modules. The expected texts below are
the seed's own prints, verbatim as the rendered page holds them (its whitespace collapsed, so
outputs are compared with whitespace collapsed too), with these differences, each asserted:

- conv2d prints `channels=64, kernel_size=[3, 3]`: NNVM's conv2d, which the graph form holds,
  always has them (Relay left them to type inference);
- two instrument prints: before EliminateCommonSubexpr's closing InferType the module is
  untyped (the workbench's pass rebuilds the graph; Relay's kept the merged calls' types), and
  before FuseOps' closing InferType it is typed throughout (Relay's fused bodies were untyped
  until then).
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "examples", "python", "seed003_pass_infra.py")

FOLDED = (
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %0 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */; %1 = add(%0, meta[relay.Constant][0] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = '
    'add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %3 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%2, %3) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ }'
)

CSE = (
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %0 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */; %1 = add(%0, meta[relay.Constant][0] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = '
    'add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; add(%2, %2) /* ty=Tensor[(1, 64, 54, 54), float32] */ }'
)

FUSED_0 = (
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %0 = fn (%p03: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %p12: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */, Primitive=1) -> Tensor[(1, 64, 54, 54), float32] { '
    'nn.conv2d(%p03, %p12, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */ } /* '
    'ty=fn (Tensor[(1, 64, 56, 56), float32], Tensor[(64, 64, 3, 3), float32]) -> Tensor[(1, 64, '
    '54, 54), float32] */; %1 = %0(%x, %weight) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = '
    'fn (%p02: Tensor[(1, 64, 54, 54), float32] /* ty=Tensor[(1, 64, 54, 54), float32] */, %p11: '
    'Tensor[(1, 64, 54, 54), float32] /* ty=Tensor[(1, 64, 54, 54), float32] */, Primitive=1) -> '
    'Tensor[(1, 64, 54, 54), float32] { add(%p02, %p11) /* ty=Tensor[(1, 64, 54, 54), float32] */ '
    '} /* ty=fn (Tensor[(1, 64, 54, 54), float32], Tensor[(1, 64, 54, 54), float32]) -> '
    'Tensor[(1, 64, 54, 54), float32] */; %3 = %2(%1, meta[relay.Constant][0] /* ty=Tensor[(1, '
    '64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; %4 = fn (%p01: '
    'Tensor[(1, 64, 54, 54), float32] /* ty=Tensor[(1, 64, 54, 54), float32] */, %p1: Tensor[(1, '
    '64, 54, 54), float32] /* ty=Tensor[(1, 64, 54, 54), float32] */, Primitive=1) -> Tensor[(1, '
    '64, 54, 54), float32] { add(%p01, %p1) /* ty=Tensor[(1, 64, 54, 54), float32] */ } /* ty=fn '
    '(Tensor[(1, 64, 54, 54), float32], Tensor[(1, 64, 54, 54), float32]) -> Tensor[(1, 64, 54, '
    '54), float32] */; %5 = %4(%3, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] '
    '*/) /* ty=Tensor[(1, 64, 54, 54), float32] */; %6 = fn (%p0: Tensor[(1, 64, 54, 54), '
    'float32] /* ty=Tensor[(1, 64, 54, 54), float32] */, Primitive=1) -> Tensor[(1, 64, 54, 54), '
    'float32] { add(%p0, %p0) /* ty=Tensor[(1, 64, 54, 54), float32] */ } /* ty=fn (Tensor[(1, '
    '64, 54, 54), float32]) -> Tensor[(1, 64, 54, 54), float32] */; %6(%5) /* ty=Tensor[(1, 64, '
    '54, 54), float32] */ }'
)

SEQ_2 = (
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %4 = fn (%p0: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %p1: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */, %p2: Tensor[(1, 64, 54, 54), float32] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */, %p3: Tensor[(1, 64, 54, 54), float32] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */, Primitive=1) -> Tensor[(1, 64, 54, 54), float32] { '
    '%0 = nn.conv2d(%p0, %p1, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 '
    '= add(%0, %p2) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = add(%1, %p3) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %3 = add(%1, %p3) /* ty=Tensor[(1, 64, 54, 54), float32] */; '
    'add(%2, %3) /* ty=Tensor[(1, 64, 54, 54), float32] */ } /* ty=fn (Tensor[(1, 64, 56, 56), '
    'float32], Tensor[(64, 64, 3, 3), float32], Tensor[(1, 64, 54, 54), float32], Tensor[(1, 64, '
    '54, 54), float32]) -> Tensor[(1, 64, 54, 54), float32] */; %4(%x, %weight, '
    'meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */, meta[relay.Constant][1] '
    '/* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */ }'
)

SEQ_3 = (
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %3 = fn (%p0: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %p1: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */, %p2: Tensor[(1, 64, 54, 54), float32] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */, %p3: Tensor[(1, 64, 54, 54), float32] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */, Primitive=1) -> Tensor[(1, 64, 54, 54), float32] { '
    '%0 = nn.conv2d(%p0, %p1, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 '
    '= add(%0, %p2) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = add(%1, %p3) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; add(%2, %2) /* ty=Tensor[(1, 64, 54, 54), float32] */ } /* ty=fn '
    '(Tensor[(1, 64, 56, 56), float32], Tensor[(64, 64, 3, 3), float32], Tensor[(1, 64, 54, 54), '
    'float32], Tensor[(1, 64, 54, 54), float32]) -> Tensor[(1, 64, 54, 54), float32] */; %3(%x, '
    '%weight, meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */, '
    'meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ }'
)

SEQ_3_NO_CSE = SEQ_2  # the seed printed the same module again

CUSTOM = (
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %0 = multiply(3f /* ty=float32 */, '
    'meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */; %1 = add(%0, %0) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = '
    'multiply(3f /* ty=float32 */, 2f /* ty=float32 */) /* ty=float32 */; %3 = nn.conv2d(%x, '
    '%weight, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %4 = multiply(%1, '
    '%2) /* ty=Tensor[(1, 64, 54, 54), float32] */; %5 = add(%3, %4) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */; %6 = add(%5, %0) /* ty=Tensor[(1, 64, 54, 54), float32] */; %7 = add(%5, '
    '%0) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%6, %7) /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */ }'
)

INSTRUMENTED = (
    'Running pass: {} The meta data of the pass - pass name: sequential, opt_level: 0, required '
    'passes: [] def @main(%x: Tensor[(1, 64, 56, 56), float32], %weight: Tensor[(64, 64, 3, 3), '
    'float32]) { %0 = add(meta[relay.Constant][0], meta[relay.Constant][0]); %1 = nn.conv2d(%x, '
    '%weight, padding=[0, 0, 0, 0]); %2 = multiply(%0, 2f); %3 = add(%1, %2); %4 = add(%3, '
    'meta[relay.Constant][0]); %5 = add(%3, meta[relay.Constant][0]); add(%4, %5) } Running pass: '
    '{} The meta data of the pass - pass name: FoldConstant, opt_level: 2, required passes: [] '
    'def @main(%x: Tensor[(1, 64, 56, 56), float32], %weight: Tensor[(64, 64, 3, 3), float32]) { '
    '%0 = add(meta[relay.Constant][0], meta[relay.Constant][0]); %1 = nn.conv2d(%x, %weight, '
    'padding=[0, 0, 0, 0]); %2 = multiply(%0, 2f); %3 = add(%1, %2); %4 = add(%3, '
    'meta[relay.Constant][0]); %5 = add(%3, meta[relay.Constant][0]); add(%4, %5) } Running pass: '
    '{} The meta data of the pass - pass name: InferType, opt_level: 0, required passes: [] def '
    '@main(%x: Tensor[(1, 64, 56, 56), float32], %weight: Tensor[(64, 64, 3, 3), float32]) { %0 = '
    'nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]); %1 = add(%0, meta[relay.Constant][0]); %2 = '
    'add(%1, meta[relay.Constant][1]); %3 = add(%1, meta[relay.Constant][1]); add(%2, %3) } '
    'Running pass: {} The meta data of the pass - pass name: PrintIR, opt_level: 0, required '
    'passes: [] def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), '
    'float32] */, %weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] '
    '*/) -> Tensor[(1, 64, 54, 54), float32] { %0 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) '
    '/* ty=Tensor[(1, 64, 54, 54), float32] */; %1 = add(%0, meta[relay.Constant][0] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = '
    'add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %3 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%2, %3) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ } Running pass: {} The meta data of the pass - pass name: InferType, '
    'opt_level: 0, required passes: [] def @main(%x: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %weight: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */) -> Tensor[(1, 64, 54, 54), float32] { %0 = '
    'nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 = '
    'add(%0, meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %2 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; %3 = add(%1, meta[relay.Constant][1] '
    '/* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; '
    'add(%2, %3) /* ty=Tensor[(1, 64, 54, 54), float32] */ } Running pass: {} The meta data of '
    'the pass - pass name: EliminateCommonSubexpr, opt_level: 3, required passes: [ InferType, ] '
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %0 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */; %1 = add(%0, meta[relay.Constant][0] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = '
    'add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %3 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%2, %3) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ } Running pass: {} The meta data of the pass - pass name: InferType, '
    'opt_level: 0, required passes: [] def @main(%x: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %weight: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */) -> Tensor[(1, 64, 54, 54), float32] { %0 = '
    'nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 = '
    'add(%0, meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %2 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%2, %2) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ } Running pass: {} The meta data of the pass - pass name: InferType, '
    'opt_level: 0, required passes: [] def @main(%x: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %weight: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */) -> Tensor[(1, 64, 54, 54), float32] { %0 = '
    'nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 = '
    'add(%0, meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %2 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%2, %2) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ } Running pass: {} The meta data of the pass - pass name: FuseOps, '
    'opt_level: 0, required passes: [ InferType, ] def @main(%x: Tensor[(1, 64, 56, 56), float32] '
    '/* ty=Tensor[(1, 64, 56, 56), float32] */, %weight: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */) -> Tensor[(1, 64, 54, 54), float32] { %0 = '
    'nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 = '
    'add(%0, meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; %2 = add(%1, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), '
    'float32] */) /* ty=Tensor[(1, 64, 54, 54), float32] */; add(%2, %2) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ } Running pass: {} The meta data of the pass - pass name: InferType, '
    'opt_level: 0, required passes: [] def @main(%x: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %weight: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */) -> Tensor[(1, 64, 54, 54), float32] { %3 = fn (%p0: '
    'Tensor[(1, 64, 56, 56), float32], %p1: Tensor[(64, 64, 3, 3), float32], %p2: Tensor[(1, 64, '
    '54, 54), float32], %p3: Tensor[(1, 64, 54, 54), float32], Primitive=1) -> Tensor[(1, 64, 54, '
    '54), float32] { %0 = nn.conv2d(%p0, %p1, padding=[0, 0, 0, 0]); %1 = add(%0, %p2); %2 = '
    'add(%1, %p3); add(%2, %2) }; %3(%x, %weight, meta[relay.Constant][0] /* ty=Tensor[(1, 64, '
    '54, 54), float32] */, meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) } '
    'def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */, '
    '%weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) -> '
    'Tensor[(1, 64, 54, 54), float32] { %3 = fn (%p0: Tensor[(1, 64, 56, 56), float32] /* '
    'ty=Tensor[(1, 64, 56, 56), float32] */, %p1: Tensor[(64, 64, 3, 3), float32] /* '
    'ty=Tensor[(64, 64, 3, 3), float32] */, %p2: Tensor[(1, 64, 54, 54), float32] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */, %p3: Tensor[(1, 64, 54, 54), float32] /* '
    'ty=Tensor[(1, 64, 54, 54), float32] */, Primitive=1) -> Tensor[(1, 64, 54, 54), float32] { '
    '%0 = nn.conv2d(%p0, %p1, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 64, 54, 54), float32] */; %1 '
    '= add(%0, %p2) /* ty=Tensor[(1, 64, 54, 54), float32] */; %2 = add(%1, %p3) /* ty=Tensor[(1, '
    '64, 54, 54), float32] */; add(%2, %2) /* ty=Tensor[(1, 64, 54, 54), float32] */ } /* ty=fn '
    '(Tensor[(1, 64, 56, 56), float32], Tensor[(64, 64, 3, 3), float32], Tensor[(1, 64, 54, 54), '
    'float32], Tensor[(1, 64, 54, 54), float32]) -> Tensor[(1, 64, 54, 54), float32] */; %3(%x, '
    '%weight, meta[relay.Constant][0] /* ty=Tensor[(1, 64, 54, 54), float32] */, '
    'meta[relay.Constant][1] /* ty=Tensor[(1, 64, 54, 54), float32] */) /* ty=Tensor[(1, 64, 54, '
    '54), float32] */ } done'
)


def collapsed(text):
    return " ".join(text.split())


def nnvm_conv(text):
    """The seed's text with conv2d's channels and kernel_size, as the graph form prints them."""
    return re.sub(r"nn\.conv2d\((%\w+), (%\w+), padding=\[0, 0, 0, 0\]\)",
                  r"nn.conv2d(\1, \2, padding=[0, 0, 0, 0], channels=64, kernel_size=[3, 3])",
                  text)


def untyped(text):
    """A module's text without its types: what Relay prints before InferType."""
    text = re.sub(r" /\* ty=[^*]*\*/", "", text)
    return re.sub(r"\) -> Tensor\[\([0-9, ]*\), float32\] \{", ") {", text)


def run_script():
    # The seed's own `np.empty(shape).astype("float32")` casts whatever memory it got, which now
    # and then holds a double beyond float32's range: NumPy's overflow warning on standard error
    # is the seed's, not ours, and would sit before PrintIR's print there.
    done = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", SCRIPT],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return collapsed(done.stdout), done.stderr


def test_seed003_modules_print_as_the_seed_printed_them():
    out, _ = run_script()
    # CustomPipeline's module holds rank-0 tensors: 3f, 2f and their product.
    expected = [FOLDED, CSE, FUSED_0, SEQ_2, SEQ_3, SEQ_3_NO_CSE, CUSTOM]
    at = 0
    for text in expected:
        want = nnvm_conv(text)
        found = out.find(want, at)
        assert found == at, f"expected at {at}:\n{want}\ngot:\n{out[at:at + len(want)]}"
        at = found + len(want) + 1
    assert out[at:].startswith("Running pass: {} ")


def instrument_prints(text):
    """(pass info, module) for each `Running pass:` print, and what follows the last."""
    parts = text.split("Running pass: {} ")[1:]
    prints = []
    for p in parts:
        info, module = p.split(" def @main", 1)
        prints.append((info, "def @main" + module))
    return prints


def test_seed003_instrument_hears_the_seeds_passes_and_sees_its_modules():
    out, err = run_script()
    ours = instrument_prints(out[out.index("Running pass: {} "):])
    seed = instrument_prints(nnvm_conv(INSTRUMENTED))
    names = [info.split("pass name: ")[1].split(",")[0] for info, _ in ours]
    assert names == ["sequential", "FoldConstant", "InferType", "PrintIR", "InferType",
                     "EliminateCommonSubexpr", "InferType", "InferType", "FuseOps", "InferType"]
    assert [info for info, _ in ours] == [info for info, _ in seed]
    for i, ((_, mine), (_, theirs)) in enumerate(zip(ours, seed)):
        if i == 6:  # before EliminateCommonSubexpr's InferType: untyped here
            assert mine == untyped(theirs)
        elif i == 9:  # before FuseOps' InferType: typed here; the seed's last module follows
            final = theirs[theirs.index("} def @main") + 2:]  # the module, then " done"
            assert mine == final.removesuffix(" done") + " " + final
        else:
            assert mine == theirs, f"print {i} ({names[i]})"
    assert out.endswith(" done")
    # PrintIR writes to standard error (TVM's log), after FoldConstant: the typed, folded module.
    assert collapsed(err) == "PrintIR(): " + nnvm_conv(FOLDED)
