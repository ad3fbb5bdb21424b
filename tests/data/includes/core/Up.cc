// A core file reaching up to the REPL.
#include "core/Graph.h"
#include "repl/Engine.h"
