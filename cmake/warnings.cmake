# Compiler warnings for our own targets (third-party headers are included as SYSTEM by their targets).
set(LABPOSE_WARNING_FLAGS
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused
  -Woverloaded-virtual -Wconversion -Wsign-conversion -Wnull-dereference -Wformat=2
  -Wimplicit-fallthrough)
# (Not -Wdouble-promotion: the reference backend sums floats in double on purpose.)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports false -Wrestrict positives inside std::string concatenation (GCC bug 105651).
  list(APPEND LABPOSE_WARNING_FLAGS -Wno-restrict)
endif()

function(labpose_warnings target)
  foreach(flag IN LISTS LABPOSE_WARNING_FLAGS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${flag}>)
  endforeach()
  if(LABPOSE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  # CUDA files: nvcc's own front-end warnings, and the host compiler's on the host code it emits.
  if(LABPOSE_CUDA_FOUND)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow,-Wconversion,-Wsign-conversion>)
    if(LABPOSE_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings>)
    endif()
  endif()
endfunction()
