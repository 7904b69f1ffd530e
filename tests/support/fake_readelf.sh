#!/bin/sh
# A stand-in for `readelf -d` that reports DT_NEEDED entries on libnvrtc, libcuda and libcrypto, so that
# ctest can check that cmake/KjitCheckOpenedLibraries.cmake catches them.
printf ' 0x0000000000000001 (NEEDED)             Shared library: [libstdc++.so.6]\n'
printf ' 0x0000000000000001 (NEEDED)             Shared library: [libnvrtc.so.13]\n'
printf ' 0x0000000000000001 (NEEDED)             Shared library: [libcuda.so.1]\n'
printf ' 0x0000000000000001 (NEEDED)             Shared library: [libcrypto.so.3]\n'
