// A view model using a REPL command helper.
#include "repl/Engine.h"
#include "repl/commands/CommandHelpers.h"
