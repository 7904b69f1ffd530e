// launch_support.hpp — the fixed kernel signature of generated programs as kjit launches see
// it: element types, deterministic inputs, host <-> device copies and launch arguments.
#pragma once

#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "program.hpp"
#include "reference.hpp"

namespace fuzz {

/// Scalar components per element of each parameter; which are arrays; which are outputs.
extern const int kLanes[P_COUNT];
extern const bool kIsArray[P_COUNT];
extern const bool kIsOutput[P_COUNT];

/// The element type of parameter `p`.
kjit::ir::Type elem_type(int p);
/// Elements of array parameter `p` in a launch of `n` threads.
int count_of(int p, int n);
/// Inputs and initial outputs of a program: deterministic from its seed.
std::vector<RefArg> make_inputs(const Program& prog);
/// Parameter `p`'s argument on the cpu device, and back (`values` components).
kjit::NdArray to_device(int p, const RefArg& a);
std::vector<double> from_device(int p, const kjit::NdArray& arr, size_t values);
/// The launch arguments: `arrays` for the arrays, `in`'s values for s and k.
std::vector<kjit::LaunchArg> launch_args(std::vector<kjit::NdArray>& arrays, const std::vector<RefArg>& in);
/// The program's inputs on the cpu device, one array per array parameter.
std::vector<kjit::NdArray> device_arrays(const std::vector<RefArg>& init);
/// Appends one buffer read back from a launch to a values record (CheckOptions::dump_values):
/// the line "<name> float64 <values> <bytes>", the raw bytes of `data`, and a newline.
void append_values(std::string* out, const std::string& name, const std::vector<double>& data);
/// Whether a message names a source line (file:line).
bool names_line(const std::string& msg);
/// A double with every digit.
std::string fmt(double x);
const char* param_name(int p);

}  // namespace fuzz
