// Interrupt: Ctrl-C as a request that long-running work polls at safe points, so a command
// stops cleanly (and the engine restores its state) instead of the process dying.
#pragma once

#include "core/Error.h"

namespace loupe {

/// Thrown at a safe point after an interrupt was requested. The engine prints `interrupted`
/// for it and keeps the state from before the command.
class Interrupted : public Error {
public:
  Interrupted() : Error("interrupted") {}
};

/// Requests an interrupt. Async-signal-safe (a SIGINT handler calls it).
void requestInterrupt();
/// Whether an interrupt was requested and not yet cleared.
bool interruptRequested();
/// Forgets a request (before a new command starts).
void clearInterrupt();
/// A safe point: throws Interrupted when an interrupt was requested.
void checkInterrupt();

} // namespace loupe
