// CommandTable: every topic's `:commands` joined in the order :help lists them — each command
// after the one its topic names (Commands::Listed), one chain from :help.
#include "repl/commands/Commands.h"

#include <map>
#include <stdexcept>

namespace loupe {

std::vector<Engine::Command> Commands::table() {
  std::map<std::string, Engine::Command> next; // by the command listed before it
  size_t count = 0;
  for (auto topic :
       {graphCommands, passCommands, codeCommands, buildCommands, runCommands, profileCommands,
        quantizeCommands, sessionCommands, tuneCommands, modelCommands})
    for (Listed &l : topic()) {
      std::string name = l.command.name;
      if (!next.emplace(l.after, std::move(l.command)).second)
        throw std::logic_error("commands " + next.at(l.after).name + " and " + name +
                               " are both listed after '" + l.after + "'");
      ++count;
    }
  std::vector<Engine::Command> table;
  for (auto it = next.find(""); it != next.end(); it = next.find(table.back().name)) {
    table.push_back(std::move(it->second));
    next.erase(it);
  }
  if (table.size() != count)
    throw std::logic_error("command " + next.begin()->second.name + " is listed after '" +
                           next.begin()->first + "', which is not in :help's chain");
  return table;
}

} // namespace loupe
