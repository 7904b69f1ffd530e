# Finds kjit's fixed dependencies: LLVM 14 libSupport (static), OpenSSL's headers (SHA-256),
# nlohmann_json, doctest, the CUDA toolkit if present (only to check kjit's own driver
# declarations against it),
# Google Benchmark and threads. None of libcuda, libnvrtc and libcrypto is linked: each is opened
# at run time (runtime/src/cuda/driver_loader.cpp, compiler/src/nvrtc_loader.cpp,
# compiler/src/sha256.cpp, docs/CUDA.md).
find_package(Threads REQUIRED)
# The CUDA toolkit is optional: kjit declares the driver ABI it calls itself
# (runtime/src/cuda/driver_types.hpp). Where the toolkit is present, a test checks those
# declarations against its cuda.h (tests/cuda/driver_abi_test.cpp).
find_package(CUDAToolkit QUIET)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto)
# OpenSSL's headers only (they type the entry points sha256.cpp resolves): loading libcrypto
# at start-up costs ~1.1 ms of the 2 ms budget (docs/BENCHMARKS.md, "Start-up").
add_library(kjit_openssl_headers INTERFACE)
target_include_directories(kjit_openssl_headers SYSTEM INTERFACE "${OPENSSL_INCLUDE_DIR}")

# LLVM libSupport, statically: the Debian package ships the archives beside its CMake files.
set(KJIT_LLVM_ROOT "/usr/lib/llvm-14" CACHE PATH "Root of the LLVM 14 installation")
find_path(KJIT_LLVM_INCLUDE_DIR llvm/Support/SHA256.h HINTS "${KJIT_LLVM_ROOT}/include" REQUIRED)
find_library(KJIT_LLVM_SUPPORT_LIB libLLVMSupport.a HINTS "${KJIT_LLVM_ROOT}/lib" REQUIRED)
find_library(KJIT_LLVM_DEMANGLE_LIB libLLVMDemangle.a HINTS "${KJIT_LLVM_ROOT}/lib" REQUIRED)
add_library(kjit_llvm_support INTERFACE)
target_include_directories(kjit_llvm_support SYSTEM INTERFACE "${KJIT_LLVM_INCLUDE_DIR}")
target_link_libraries(kjit_llvm_support INTERFACE
  "${KJIT_LLVM_SUPPORT_LIB}" "${KJIT_LLVM_DEMANGLE_LIB}" Threads::Threads ${CMAKE_DL_LIBS})
# libSupport queries the terminal (colours) through terminfo.
find_library(KJIT_TINFO_LIB NAMES tinfo ncurses REQUIRED)
target_link_libraries(kjit_llvm_support INTERFACE "${KJIT_TINFO_LIB}")
add_library(kjit::llvm_support ALIAS kjit_llvm_support)

if(KJIT_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()
if(KJIT_BUILD_BENCH)
  # Only bench/*.cpp need it; the GPU benchmarks (bench/gpu_*.cpp) are built without it.
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Google Benchmark not found: only the GPU benchmarks of bench/ are built")
  endif()
endif()
