# cmake -DMODULE_DIR=... -DCMAKE_NM=... -DWORK_DIR=... -DCOMPILER=... -DCASE=plain|static -P this
# CASE=static wraps COMPILER in a script that adds -static-libstdc++, the way
# a toolchain that links the C++ runtime into shared libraries behaves.
set(CMAKE_BINARY_DIR ${WORK_DIR}/${CASE})
set(compiler ${COMPILER})
if(CASE STREQUAL "static")
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR})
  file(WRITE ${CMAKE_BINARY_DIR}/cxx.sh "#!/bin/sh\nexec \"${COMPILER}\" -static-libstdc++ \"$@\"\n")
  file(CHMOD ${CMAKE_BINARY_DIR}/cxx.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  set(compiler ${CMAKE_BINARY_DIR}/cxx.sh)
endif()
include(${MODULE_DIR}/ulpscopeStaticRuntimeCheck.cmake)
ulpscope_check_static_cxx_runtime("${compiler}" "the compiler under test")
if(EXISTS ${CMAKE_BINARY_DIR}/CMakeFiles/ulpscope_runtime_probe/probe.so)
  message(STATUS "probe built")
else()
  message(FATAL_ERROR "the probe library was not built with ${compiler}")
endif()
