# kjit_add_kernel_library(NAME SOURCES...): a shared library of kernels (their headers
# included by SOURCES). Its kernels register themselves when it loads; `kjit precompile`
# builds their modules. Source paths are recorded relative to the project, so module keys
# do not depend on where the tree is checked out.
function(kjit_add_kernel_library name)
  add_library(${name} SHARED ${ARGN})
  target_link_libraries(${name} PUBLIC kjit)
  target_compile_options(${name} PRIVATE "-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=")
endfunction()
