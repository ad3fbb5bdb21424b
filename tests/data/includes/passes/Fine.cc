// A pass using core only: fine.
#include "core/Graph.h"
#include "passes/Pass.h"
#include <vector>
