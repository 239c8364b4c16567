# examples/user-kernel against an installed ulpscope (cmake -P): install this
# build to a scratch prefix, build the example with the good accumulation and
# with the bad one, and check that the good one passes its GoogleTest and the
# gate while the bad one fails both, and that the replay command printed by the
# failing test re-runs the cell it names.
# In: BUILD_DIR, EXAMPLE_DIR, WORK_DIR, GENERATOR, CXX_COMPILER, HAVE_CUDA,
#     CUDA_ARCHITECTURES, CTEST_COMMAND, CUDA_INCLUDE_DIRS (CUDA builds).
cmake_minimum_required(VERSION 3.25)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(last_rc "${rc}" PARENT_SCOPE)
  set(last_out "${out}" PARENT_SCOPE)
  message(STATUS "${what}: exit ${rc}")
endfunction()

function(expect_success what)
  run("${what}" ${ARGN})
  if(NOT last_rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${last_rc}):\n${last_out}")
  endif()
  set(last_out "${last_out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
expect_success("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(tool ${prefix}/bin/accuracy_report)

# The installed headers stand alone: one file including every one of them
# compiles against the prefix (and the system's fmt, nlohmann_json, MPFR,
# Boost; CUDA's headers for kernels/exact.hpp), so the set installed is
# closed under #include.
file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/ulpscope/*.hpp ${prefix}/include/ulpscope/*.h)
list(LENGTH headers header_count)
list(TRANSFORM CUDA_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE cuda_includes)
set(all_headers "")
foreach(h IN LISTS headers)
  string(APPEND all_headers "#include <${h}>\n")
endforeach()
file(WRITE ${WORK_DIR}/all_headers.cpp "${all_headers}")
expect_success("compile the ${header_count} installed headers" ${CXX_COMPILER} -std=c++20 -fsyntax-only
  -I${prefix}/include/ulpscope -I${prefix}/include ${cuda_includes} ${WORK_DIR}/all_headers.cpp)

set(baseline ${WORK_DIR}/baseline.json)

function(build_example strategy)
  set(dir ${WORK_DIR}/${strategy})
  expect_success("configure the ${strategy} example" ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${dir} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
    # The suite's own flags: an example linked against a sanitized install needs the same sanitizers.
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    -DRMSNORM_ACCUMULATION=${strategy} -DRMSNORM_CUDA=${HAVE_CUDA} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}
    -DRMSNORM_GATE_BASELINE=${baseline})
  expect_success("build the ${strategy} example" ${CMAKE_COMMAND} --build ${dir} -j2)
endfunction()

# The good build, and the baseline a main branch would store from it.
build_example(fp64)
expect_success("baseline from the good build" ${tool} --kernel-lib ${WORK_DIR}/fp64/librmsnorm_plugin.so
  --backend cpu -q --n 1024,2^14 --cols 1024 --format json --out ${baseline})
expect_success("ctest of the good build (its GoogleTest and the gate)" ${CTEST_COMMAND} --test-dir ${WORK_DIR}/fp64
  --output-on-failure)
foreach(test RmsNorm.ARowOfOnesGivesGamma RmsNorm.WithinOneUlpOnEveryAdversarialDistribution rmsnorm_gate)
  if(NOT last_out MATCHES "${test} [.]+ +Passed")
    message(FATAL_ERROR "the good build did not run and pass ${test}:\n${last_out}")
  endif()
endforeach()

# The bad build: the accuracy test and the gate fail, the plain test passes.
build_example(bf16)
run("ctest of the bad build" ${CTEST_COMMAND} --test-dir ${WORK_DIR}/bf16 --output-on-failure)
if(last_rc EQUAL 0)
  message(FATAL_ERROR "the bad accumulation passed its tests:\n${last_out}")
endif()
string(REGEX MATCH "The following tests FAILED:.*" failed "${last_out}")
foreach(test RmsNorm.WithinOneUlpOnEveryAdversarialDistribution rmsnorm_gate)
  if(NOT failed MATCHES "${test} \\(Failed\\)")
    message(FATAL_ERROR "the bad build did not fail ${test}:\n${last_out}")
  endif()
endforeach()
if(failed MATCHES "ARowOfOnesGivesGamma")
  message(FATAL_ERROR "the bad build failed the plain test too:\n${last_out}")
endif()
if(NOT last_out MATCHES "ulp error grew")
  message(FATAL_ERROR "the gate's summary does not say that the ulp error grew:\n${last_out}")
endif()

# The failing test names the worst cell and the command that replays it.
run("the bad build's GoogleTest" ${WORK_DIR}/bf16/rmsnorm_test)
if(NOT last_out MATCHES "\n  replay: accuracy_report ([^\n]*)")
  message(FATAL_ERROR "no replay command in the failure:\n${last_out}")
endif()
separate_arguments(replay_args UNIX_COMMAND "${CMAKE_MATCH_1}")
if(NOT last_out MATCHES "worst: [^\n]*result (0x[0-9a-fp.+-]+|inf|-inf|nan)")
  message(FATAL_ERROR "no worst result in the failure:\n${last_out}")
endif()
set(worst_result "${CMAKE_MATCH_1}")
expect_success("the replay command" ${tool} ${replay_args} --format csv -q)
string(FIND "${last_out}" ",${worst_result}," at)
if(at EQUAL -1)
  message(FATAL_ERROR "the replay does not show the failure's result ${worst_result}:\n${last_out}")
endif()
message(STATUS "good build passes, bad build fails its test and the gate; replay shows ${worst_result}")
