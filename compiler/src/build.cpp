// build_module and build_modules: option checks, keys, and the parallel build of many
// (module, target) pairs on an llvm::ThreadPool.
#include <map>

#include "llvm_support.hpp"

#include "cache_impl.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/error.hpp"

namespace kjit::compiler {

namespace {

void check_options(const CompileOptions& o) {
  if (o.opt_level < 0 || o.opt_level > 3)
    throw Error(ErrorKind::User, "CompileOptions::opt_level must be 0 to 3, not " + std::to_string(o.opt_level));
  if (o.max_registers < 0 || o.max_registers > 255)
    throw Error(ErrorKind::User, "CompileOptions::max_registers must be 0 (no limit) to 255, not " +
                                     std::to_string(o.max_registers));
  if (o.cxx_standard.empty())
    throw Error(ErrorKind::User, "CompileOptions::cxx_standard is empty (use for example \"c++17\")");
}

std::string key_of(const ModuleSource& source, const Target& target, const CompileOptions& options) {
  return module_key(source, target, options);  // generates the text (once) only without identity
}

}  // namespace

Artifact build_module(const ModuleSource& source, const Target& target, const CompileOptions& options) {
  return build_module(source, target, options, Cache::global());
}

Artifact build_module(const ModuleSource& source, const Target& target, const CompileOptions& options,
                      Cache& cache) {
  check_options(options);
  return CacheAccess::impl(cache).build(source, target, options, key_of(source, target, options), nullptr);
}

std::vector<BuildResult> build_modules(const std::vector<BuildRequest>& requests, Cache& cache, unsigned jobs) {
  Cache::Impl& impl = CacheAccess::impl(cache);
  std::vector<BuildResult> results(requests.size());
  std::vector<std::string> keys(requests.size());
  std::vector<size_t> misses;
  auto fail = [&](size_t i, const std::exception& e) {
    results[i].ok = false;
    results[i].error = e.what();
  };
  // Keys and hits first, on this thread: a hit costs microseconds.
  for (size_t i = 0; i < requests.size(); ++i) {
    const BuildRequest& r = requests[i];
    try {
      if (!r.source) throw Error(ErrorKind::User, "build request " + std::to_string(i) + " has no module");
      check_options(r.options);
      keys[i] = key_of(*r.source, r.target, r.options);
      std::string problem;  // a bad entry is reported when the miss is built
      if (impl.mode != CacheMode::InMemory)
        if (auto a = impl.load(*r.source, r.target, keys[i], &problem)) {
          results[i].ok = true;
          results[i].artifact = std::move(*a);
          continue;
        }
      misses.push_back(i);
    } catch (const std::exception& e) {
      fail(i, e);
    }
  }
  // ModuleSource::source_text() is not thread-safe: generate every text here, once.
  std::map<const ModuleSource*, std::string> gen_errors;
  for (size_t i : misses) {
    const ModuleSource* s = requests[i].source;
    if (gen_errors.count(s)) continue;
    try {
      generated_text(*s);
      gen_errors[s] = "";
    } catch (const std::exception& e) {
      gen_errors[s] = e.what();
    }
  }
  // One compile per distinct key; duplicates take its result.
  std::map<std::string, size_t> first_of_key;
  std::vector<size_t> todo;
  for (size_t i : misses) {
    if (!gen_errors[requests[i].source].empty()) {
      results[i].error = gen_errors[requests[i].source];
      continue;
    }
    if (first_of_key.emplace(keys[i], i).second) todo.push_back(i);
  }
  {
    llvm::ThreadPool pool(llvm::hardware_concurrency(jobs));
    for (size_t i : todo)
      pool.async([&, i] {
        const BuildRequest& r = requests[i];
        try {
          results[i].artifact = impl.build(*r.source, r.target, r.options, keys[i], &r.source->text);
          results[i].ok = true;
        } catch (const std::exception& e) {
          fail(i, e);
        }
      });
    pool.wait();
  }
  for (size_t i : misses)
    if (auto it = first_of_key.find(keys[i]); it != first_of_key.end() && it->second != i)
      results[i] = results[it->second];
  return results;
}

}  // namespace kjit::compiler
