// The robustness kernels (robust_kernels.hpp) in the JAX tests' kernel library.
#include "robust_kernels.hpp"
