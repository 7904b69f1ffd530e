// The kjit subcommands: each file defines one (its llvm::cl::SubCommand, options and run
// function) and exposes it here; main() parses the command line and runs the chosen one.
#pragma once

#include <string>
#include <vector>

namespace llvm::cl {
class SubCommand;
class OptionCategory;
}  // namespace llvm::cl

namespace kjit::tool {

/// One subcommand.
struct Command {
  llvm::cl::SubCommand* sub;           ///< selected when it was named on the command line
  llvm::cl::OptionCategory* options;   ///< its options (others are hidden from its --help)
  const char* overview;                ///< the text above its --help: what it does, examples
  int (*run)();                        ///< runs it after parsing; returns the exit status
};

const Command& precompile_command();
const Command& list_command();
const Command& source_command();
const Command& cache_command();
const Command& devices_command();

/// Every subcommand, in the order `kjit --help` lists them.
inline std::vector<const Command*> all_commands() {
  return {&precompile_command(), &list_command(), &source_command(), &cache_command(),
          &devices_command()};
}

}  // namespace kjit::tool
