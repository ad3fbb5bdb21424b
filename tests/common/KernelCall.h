// KernelCall: a compiled kernel called on tensors in the tests — each argument and output in a
// buffer of its dtype's bytes, the outputs read back.
#pragma once

#include "backend/Codegen.h"
#include "core/DType.h"
#include "core/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe::test {

/// Calls compiled function `name` on `args`, its outputs shaped as `outputs` (a generic
/// kernel's: the stages of the kernel of those sizes), and returns the outputs.
inline std::vector<Tensor> callCompiled(const backend::CompiledModule &m, const std::string &name,
                                        const std::vector<Tensor> &args,
                                        const std::vector<loop::ComputeRef> &outputs) {
  // One byte buffer per argument and output, 8-aligned, holding its dtype's elements.
  std::vector<std::vector<uint64_t>> bufs;
  auto add = [&](const std::vector<double> &v, int dtype) {
    size_t width = static_cast<size_t>(dtypeBytes(dtype));
    bufs.emplace_back((v.size() * width + 7) / 8 + 1);
    for (size_t i = 0; i < v.size(); ++i)
      storeElement(reinterpret_cast<char *>(bufs.back().data()) + i * width, dtype, v[i]);
  };
  for (const Tensor &t : args)
    add(t.data, t.dtype);
  for (const auto &o : outputs)
    add(std::vector<double>(static_cast<size_t>(numElements(o->shape)), 0.0), o->dtype);
  std::vector<void *> ptrs;
  for (auto &b : bufs)
    ptrs.push_back(b.data());
  m.call(name, ptrs);
  std::vector<Tensor> out;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor t(outputs[k]->shape, outputs[k]->dtype);
    const char *p = reinterpret_cast<const char *>(bufs[args.size() + k].data());
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = loadElement(p + i * static_cast<size_t>(dtypeBytes(t.dtype)), t.dtype);
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace loupe::test
