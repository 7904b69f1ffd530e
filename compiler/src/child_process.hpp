// Running a compiler as a child that cannot outlive kjit: its own process group, killed whole
// when the thread that started it dies (by any signal, SIGKILL included).
#pragma once

#include <string>
#include <vector>

namespace kjit::compiler {

/// Runs `program args...` with stdin from /dev/null and stdout and stderr into `log_path`
/// (created, owner-only) and waits for it. The compiler and everything it starts (cc1plus,
/// as, ld) run in a process group of their own, led by a small watcher that kills the whole
/// group when this process (the calling thread) dies, so killing `kjit precompile` or a
/// program that compiles leaves no compiler behind. Returns the exit status (128 + signal
/// when it was killed), or -1 with *error set when the program could not be started.
int run_compiler_process(const std::string& program, const std::vector<std::string>& args,
                         const std::string& log_path, std::string* error);

}  // namespace kjit::compiler
