// What the launch paths and NdArray's operations tell a graph being captured on their thread
// (kjit::capture, internal): on the cpu they are recorded instead of run; on CUDA they run
// into the capture, and the graph keeps their arrays alive.
#pragma once

#include <functional>
#include <vector>

#include "kjit/runtime/internal/entry_run.hpp"
#include "kjit/runtime/launch.hpp"
#include "param_packer.hpp"

namespace kjit::detail {

/// The state of one capture (graph.cpp).
struct GraphRecorder;

/// The capture open on this thread, or null (a thread-local read).
GraphRecorder* open_capture() noexcept;

/// Before a launch on `device` is packed: a User error when `capture` records on another
/// device (a cpu capture cannot hold a CUDA launch, nor the reverse).
void check_capture_device(const GraphRecorder& capture, const KernelDef& kernel, const Device& device);

/// A checked, packed forward launch: on a cpu capture, recorded (true: do not run it); on a
/// CUDA capture, its arrays are kept alive and false is returned (it runs into the capture).
bool capture_forward(GraphRecorder& capture, const EntryRun& run, const PackedParams& params,
                     const std::vector<LaunchArg>& args);

/// A checked adjoint launch: on a cpu capture, recorded as a call of launch_adjoint with these
/// arguments (true); on CUDA, as capture_forward.
bool capture_adjoint(GraphRecorder& capture, const KernelDef& kernel, const Dims& dims,
                     const std::vector<LaunchArg>& args, const std::vector<LaunchArg>& adj_args,
                     const LaunchOptions& options, const Device& device);

/// An NdArray operation (`what`, for errors) on arrays of `devices`, `step` doing it again:
/// with no capture open, false; on a cpu capture, recorded (true); on a CUDA capture, `arrays`
/// are kept alive and false is returned. A User error when the devices are not the capture's.
bool capture_array_step(const char* what, const std::vector<NdArray>& arrays, std::function<void()> step);

}  // namespace kjit::detail
