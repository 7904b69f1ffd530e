// The consumer's kernel library: loading it registers its kernels (kjit precompile reads it).
#include "consumer_kernels.hpp"
