# What tests need when the build is instrumented with AddressSanitizer (the
# debug preset): included by the test folders whose programs run outside the
# sanitizer's usual assumptions. Sets
#   ULPSCOPE_ASAN          ON when CMAKE_CXX_FLAGS has -fsanitize=...address...
#   ULPSCOPE_ASAN_RUNTIME  the compiler's shared ASan runtime, which an
#                          uninstrumented program (python3) must preload before
#                          it loads an instrumented module: ASan must see every
#                          allocation from the start (its "runtime does not come
#                          first" check).
#   ULPSCOPE_TEST_TIME_FACTOR  how many times longer a test may take than its
#                          TIMEOUT says: 4 under ASan, whose checks at -O1 make
#                          the large end-to-end cells several times slower
#                          (ulpscope_test_timeout below), else 1.
# Included by each folder that needs them (the variables are the folder's).

set(ULPSCOPE_ASAN OFF)
set(ULPSCOPE_ASAN_RUNTIME "")
set(ULPSCOPE_TEST_TIME_FACTOR 1)
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
  set(ULPSCOPE_ASAN ON)
  set(ULPSCOPE_TEST_TIME_FACTOR 4)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(_asan_runtime_name libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
  else()
    set(_asan_runtime_name libasan.so)
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_asan_runtime_name}
                  OUTPUT_VARIABLE ULPSCOPE_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${ULPSCOPE_ASAN_RUNTIME}" OR NOT EXISTS "${ULPSCOPE_ASAN_RUNTIME}")
    message(FATAL_ERROR "ulpscope: an ASan build, but ${CMAKE_CXX_COMPILER} does not know where ${_asan_runtime_name} is "
                        "(Debian: libclang-rt-14-dev for clang++, libasan8 for g++)")
  endif()
endif()

# ulpscope_test_timeout(VAR SECONDS): VAR = SECONDS scaled by
# ULPSCOPE_TEST_TIME_FACTOR, for a TIMEOUT property.
function(ulpscope_test_timeout var seconds)
  math(EXPR _scaled "${seconds} * ${ULPSCOPE_TEST_TIME_FACTOR}")
  set(${var} ${_scaled} PARENT_SCOPE)
endfunction()
