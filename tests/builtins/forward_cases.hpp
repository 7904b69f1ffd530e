// The table of forward-value cases of the builtins: per builtin and signature, how its
// arguments are drawn and what the result must be, computed in float64 by the test itself
// (standard-library math or closed forms) — or a property the result must have where the
// answer is not unique (decompositions).
#pragma once

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kjit/ir/type.hpp"

namespace kjit::test {

using Lanes = std::vector<double>;
using Inputs = std::vector<Lanes>;

/// One argument: its type for a variant scalar (float32 or float64 runs) and a generator of
/// the lanes of element `i`.
struct ArgSpec {
  std::function<ir::Type(ir::Scalar)> type;
  std::function<Lanes(std::mt19937_64&, int i)> gen;
};

/// One signature of one builtin.
struct FwdCase {
  std::string builtin;
  std::vector<ArgSpec> args;
  /// The expected result lanes from the input lanes (as the kernel saw them)...
  std::function<Lanes(const Inputs&)> ref = nullptr;
  /// ...or the largest violation of the properties the result must have.
  std::function<double(const Inputs&, const Lanes&)> check = nullptr;
  double tol32 = 2e-6;  ///< relative to max(1, |expected|)
  double tol64 = 1e-11;
  std::vector<ir::Scalar> variants = {ir::Scalar::F64, ir::Scalar::F32};
};

// Argument makers.
ArgSpec S(double lo, double hi);                 ///< a floating scalar in [lo, hi)
ArgSpec Sfix(std::vector<double> values);        ///< a floating scalar from a list (cycled)
ArgSpec V(int n, double lo = -1, double hi = 1);  ///< a floating n-vector
ArgSpec M(int r, int c, double lo = -1, double hi = 1);
ArgSpec Q();                                     ///< a unit quaternion
ArgSpec Qany();                                  ///< a quaternion of any length
ArgSpec T();                                     ///< a transform with a unit rotation
ArgSpec R3();                                    ///< a 3x3 rotation matrix
ArgSpec R4();                                    ///< a 4x4 rigid transform matrix
ArgSpec TRS();                                   ///< a 4x4 T R S matrix, positive scale
ArgSpec Sym3();                                  ///< a symmetric 3x3 matrix
ArgSpec Unit3();                                 ///< a unit 3-vector
ArgSpec Fixed(ir::Type t, std::vector<double> values);  ///< any type, all lanes one listed value
ArgSpec Int(std::vector<double> values);         ///< an int32 from a list
ArgSpec UInt(std::vector<double> values);        ///< a uint32 from a list
ArgSpec Bools();                                 ///< a bool, alternating

// float64 helpers for references.
namespace ref {
double dot(const Lanes& a, const Lanes& b);
Lanes cross(const Lanes& a, const Lanes& b);
Lanes add(Lanes a, const Lanes& b);
Lanes sub(Lanes a, const Lanes& b);
Lanes scale(Lanes a, double s);
Lanes matmul(const Lanes& a, int r, int k, const Lanes& b, int c);  ///< (r x k) (k x c)
Lanes transpose(const Lanes& a, int r, int c);
double det(const Lanes& a, int n);
Lanes inverse(const Lanes& a, int n);
Lanes qmul(const Lanes& a, const Lanes& b);
Lanes qconj(const Lanes& q);
Lanes qrotate(const Lanes& q, const Lanes& v);  ///< q v q* (for unit q)
Lanes qmatrix(const Lanes& q);
Lanes axis_angle(const Lanes& axis, double angle);
Lanes slice(const Lanes& a, int from, int n);
Lanes concat(const Lanes& a, const Lanes& b);
/// Largest |a_i - b_i|.
double diff(const Lanes& a, const Lanes& b);
/// Largest deviation of (r x r) Q from orthogonality.
double orthogonality(const Lanes& q, int n);
}  // namespace ref

/// Every forward case (math, geometry, random).
std::vector<FwdCase> all_forward_cases();
std::vector<FwdCase> math_cases();      ///< operators, scalar math, vectors, matrices, utility
std::vector<FwdCase> geometry_cases();  ///< quaternions, transforms, spatial
std::vector<FwdCase> random_cases();    ///< random draws and noise

}  // namespace kjit::test
