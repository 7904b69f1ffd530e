// Compiler children in a process group of their own, killed with kjit (PR_SET_PDEATHSIG).
#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file_util.hpp"

extern char** environ;

namespace kjit::compiler {

namespace {

/// The watcher's signal handler: the death of kjit (its parent death signal) or a signal
/// meant for the build kills the compiler's whole group, watcher included.
void kill_group(int) { ::kill(0, SIGKILL); }

void close_fds(int from, int to) {  // [from, to]
  if (from > to) return;
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, unsigned(from), unsigned(to), 0u) == 0) return;
#endif
  for (int fd = from; fd <= std::min(to, 4095); ++fd) ::close(fd);
}

/// Closes every descriptor but 0-2 and `keep`: a watcher never execs, so without this it
/// would hold other compiles' pipes (started by other threads) open until it exits.
void close_all_but(int keep[3]) {
  std::sort(keep, keep + 3);
  int from = 3;
  for (int i = 0; i < 3; ++i) {
    close_fds(from, keep[i] - 1);
    from = std::max(from, keep[i] + 1);
  }
  close_fds(from, INT32_MAX);
}

/// Between fork and exec only async-signal-safe calls: everything is prepared before.
[[noreturn]] void watcher(const char* path, char* const* argv, int log_fd, int null_fd, int report_fd,
                          pid_t parent) {
  int keep[3] = {log_fd, null_fd, report_fd};
  close_all_but(keep);
  ::setpgid(0, 0);
  // A clean slate: the calling thread may block signals (the death signal among them) or
  // ignore SIGCHLD (which would make waitpid fail); both would be inherited.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGCHLD, SIG_DFL);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = kill_group;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) kill_group(0);  // kjit died before the death signal was armed
  pid_t child = ::fork();
  if (child < 0) {
    int err = errno;
    (void)!::write(report_fd, &err, sizeof err);
    ::_exit(127);
  }
  if (child == 0) {
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(path, argv, environ);
    int err = errno;
    (void)!::write(report_fd, &err, sizeof err);
    ::_exit(127);
  }
  ::close(report_fd);  // only the compiler's copy reports (it closes at exec)
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}

}  // namespace

int run_compiler_process(const std::string& program, const std::vector<std::string>& args,
                         const std::string& log_path, std::string* error) {
  std::vector<std::string> owned;
  owned.push_back(program);
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);

  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    *error = "cannot create " + log_path + ": " + errno_text(errno);
    return -1;
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2];
  if (null_fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    *error = "cannot prepare the compiler's input: " + errno_text(errno);
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return -1;
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) watcher(owned[0].c_str(), argv.data(), log_fd, null_fd, report[1], parent);
  int fork_errno = errno;
  ::close(report[1]);
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) {
    ::close(report[0]);
    *error = "cannot start " + program + ": " + errno_text(fork_errno);
    return -1;
  }
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n == ssize_t(sizeof exec_errno)) {
    *error = "cannot run " + program + ": " + errno_text(exec_errno);
    return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace kjit::compiler
