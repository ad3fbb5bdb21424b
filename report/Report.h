// Report: a session as one self-contained HTML file — each step's command, graph picture, IR,
// diff to the step before, fusion groups, and for a built step its functions' loops and
// profile — with search and collapsible sections, no network, no server.
#pragma once

#include "repl/Engine.h"

#include <string>

namespace loupe::report {

/// The HTML document of engine `e`'s session so far, titled `title` (the session's file name).
/// Everything from the graph or the session (names, attributes, commands, outputs) is escaped
/// text; the page loads nothing (its Content-Security-Policy allows no fetch) and its script
/// only searches and folds.
std::string sessionReport(const Engine &e, const std::string &title);

/// Gives `e` what needs the viewer's pictures: `:report FILE.html` (writes sessionReport to
/// FILE, checked against the engine's trust like every write) and the viewer's layout for
/// `:dot FILE placed`.
void addViewCommands(Engine &e);

} // namespace loupe::report
