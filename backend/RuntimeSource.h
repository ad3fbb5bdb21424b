// RuntimeSource: the runtime's own source text (backend/Runtime.h and Runtime.cpp, embedded at
// configure time), which `:export` compiles into deploy.so: an exported network runs on the
// same thread pool as the REPL.
#pragma once

namespace loupe::backend {

/// backend/Runtime.h's text.
extern const char *const kRuntimeHeaderSource;
/// backend/Runtime.cpp's text.
extern const char *const kRuntimeSource;

} // namespace loupe::backend
