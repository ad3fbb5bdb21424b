// ONNX Runtime's time for one ONNX model on the CPU (benchmarks only): the median of N runs
// after warm-up, with the given intra-op threads. npm's onnxruntime-node, installed with
// --ignore-scripts in a scratch folder whose node_modules NODE_PATH names.
// usage: NODE_PATH=DIR/node_modules node ort_bench.js MODEL.onnx THREADS [RUNS] [SHAPE]
// (SHAPE of the first input, comma-separated; 1,3,224,224 when not given)
const ort = require('onnxruntime-node');

async function main() {
  const [model, threads, runs = '50', shapeText = '1,3,224,224'] = process.argv.slice(2);
  const shape = shapeText.split(',').map(Number);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const input = session.inputNames[0];
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => Math.random() * 2 - 1);
  const feeds = {[input]: new ort.Tensor('float32', data, shape)};
  for (let i = 0; i < 5; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(times[Math.floor(times.length / 2)].toFixed(3));
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(1);
});
