// Helpers shared by the test suites: temporary folders, environment overrides, files.
#pragma once

#include <functional>
#include <string>

namespace kjit::test {

/// A fresh folder under the build tree, removed (with its contents) on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "tmp");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// path() + "/" + name
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Sets (or, with nullptr, unsets) an environment variable for the object's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::string old_;
  bool had_old_ = false;
};

/// The whole content of a file ("" when it cannot be read).
std::string read_file(const std::string& path);
/// Replaces a file's content.
void write_file(const std::string& path, const std::string& content);
/// Whether a path exists.
bool exists(const std::string& path);
/// Runs a shell command; returns its exit status and puts stdout+stderr in *output.
int run_command(const std::string& command, std::string* output = nullptr);
/// Runs one test case of this test binary in a child process, with `env` ("NAME=value ...")
/// before it: for cases that need a fresh process (environment read once, thread counts).
int run_test_case(const std::string& env, const std::string& test_case, std::string* output = nullptr);
/// The text of the kjit User error `f` throws, or "no error" when it throws none; an error of
/// another kind (or another exception) propagates, failing the test that asked.
std::string user_error(const std::function<void()>& f);
/// Runs `f` with the process's standard output (file descriptor 1, so device printf too)
/// redirected to a file; returns what was written. An exception of `f` propagates after the
/// redirection is undone.
std::string capture_stdout(const std::function<void()>& f);

}  // namespace kjit::test
