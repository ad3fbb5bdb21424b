// Bridge: what the extension's binding files share — loupe.Error, the guard that turns the
// engine's Error into it, and tensors to and from NumPy.
#pragma once

#include "core/Error.h"
#include "core/Tensor.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

namespace loupe::python {

/// Raises loupe.Error with `message` (made when the module loads).
[[noreturn]] void raise(const std::string &message);

/// An array's values as a Tensor of its dtype (a copy: the workbench holds values as doubles);
/// `name` names it in errors.
Tensor tensorOf(const std::string &name, const pybind11::array &a);

/// A Tensor as a NumPy array of its dtype.
pybind11::array arrayOf(const Tensor &t);

/// Runs a call of the engine, turning its Error into loupe.Error.
template <typename F> auto guarded(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error &e) {
    raise(e.what());
  }
}

/// Adds the Relay half of the module (RelayBindings.cpp).
void bindRelay(pybind11::module_ &m);

} // namespace loupe::python
