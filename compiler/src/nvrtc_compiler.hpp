// The NVRTC driver: one module text to a cubin (sm_XX) or PTX (compute_XX).
#pragma once

#include <string>
#include <vector>

#include "compile_output.hpp"
#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/target.hpp"

namespace kjit::compiler {

/// The NVRTC options for `target` and `options`, in the order passed to NVRTC.
std::vector<std::string> nvrtc_options(const Target& target, const CompileOptions& options);

/// "nvrtc 13.0" plus the driver's fixed flags: the NVRTC part of every GPU module key.
const std::string& nvrtc_identity();

/// "NVRTC 13.0", for messages.
std::string nvrtc_version_string();

/// Compiles `text` (named `generated_file` in diagnostics) for a GPU `target`. Never throws
/// for a compile error: the log is in the result. Throws an Internal error when NVRTC itself
/// fails (out of memory).
CompileOutput nvrtc_compile(const std::string& text, const std::string& generated_file,
                            const Target& target, const CompileOptions& options);

/// A header handed to NVRTC in memory (found by `#include "name"`).
struct NvrtcHeader {
  std::string name;
  std::string text;
};

/// Runs NVRTC with exactly `options` (no fixed flags added) and in-memory `headers`, and
/// collects a cubin (`kind` Cubin) or PTX. nvrtc_compile() is this with nvrtc_options();
/// benchmarks use it to measure flags and precompiled headers the driver does not use.
CompileOutput nvrtc_run(const std::string& text, const std::string& generated_file, TargetKind kind,
                        const std::vector<std::string>& options, const std::vector<NvrtcHeader>& headers = {});

}  // namespace kjit::compiler
