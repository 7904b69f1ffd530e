// The cli tests' kernel library: loading it registers modules cli_ok and cli_broken.
#include "cli_test_kernels.hpp"
