# Sanitizer and fuzzing builds. LABPOSE_SANITIZE=address,undefined (or thread) instruments every
# target of ours and the test programs; LABPOSE_FUZZ=ON (Clang only) adds coverage instrumentation
# for libFuzzer and builds the harnesses of tests/fuzz with it. Neither changes what a normal build
# makes. tools/check.sh makes both builds; README says when to run it.
set(LABPOSE_SANITIZE "" CACHE STRING
    "sanitizers for every target: address,undefined | thread | empty (none)")
option(LABPOSE_FUZZ "build the libFuzzer harnesses of tests/fuzz (needs Clang)" OFF)

if(LABPOSE_SANITIZE)
  if(LABPOSE_SANITIZE MATCHES "thread" AND LABPOSE_SANITIZE MATCHES "address")
    message(FATAL_ERROR "LABPOSE_SANITIZE=${LABPOSE_SANITIZE}: thread and address cannot be combined; "
                        "make one build with address,undefined and another with thread")
  endif()
  # Every UBSan finding stops the program (a test fails) instead of printing and going on.
  set(labpose_sanitize_flags -fsanitize=${LABPOSE_SANITIZE} -fno-omit-frame-pointer -g)
  if(LABPOSE_SANITIZE MATCHES "undefined")
    list(APPEND labpose_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${labpose_sanitize_flags}>")
  add_link_options(-fsanitize=${LABPOSE_SANITIZE})
  message(STATUS "labpose: sanitizers ${LABPOSE_SANITIZE}")
endif()

if(LABPOSE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LABPOSE_FUZZ=ON needs Clang with libFuzzer (Debian: clang libclang-rt-14-dev); "
                        "configure with CC=clang CXX=clang++")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
  message(STATUS "labpose: libFuzzer harnesses on")
endif()

# Sanitized test programs list their tests when ctest runs, not at build time: a program that
# fails under a sanitizer then fails its tests instead of the build.
if(LABPOSE_SANITIZE OR LABPOSE_FUZZ)
  set(CMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE PRE_TEST)
endif()
