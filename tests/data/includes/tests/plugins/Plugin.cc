// A plugin reaching into the backend.
#include "backend/Build.h"
#include "passes/Pass.h"
