# ulpscope_check_static_cxx_runtime(COMPILER WHAT): warns when COMPILER links
# parts of the C++ runtime statically into the shared libraries it makes (the
# GPU machines' /opt/gcc does). Such a library holds its own copy of
# __cxa_throw and friends; in a process that also loads libstdc++.so (the
# Python module in any interpreter with NumPy or torch), the two copies'
# state meets and evaluate crashes (docs/python.md, "One compiler for C++ and
# CUDA"). The probe: a small shared library that throws and calls
# std::call_once, and whether it defines the runtime's functions itself.
function(ulpscope_check_static_cxx_runtime compiler what)
  if(NOT compiler OR NOT CMAKE_NM)
    return()
  endif()
  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/ulpscope_runtime_probe)
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/probe.cpp
       "#include <mutex>\n#include <stdexcept>\n"
       "void ulpscope_probe() { static std::once_flag o; std::call_once(o, [] {}); throw std::runtime_error(\"x\"); }\n")
  execute_process(COMMAND ${compiler} -shared -fPIC ${dir}/probe.cpp -o ${dir}/probe.so
                  RESULT_VARIABLE built OUTPUT_QUIET ERROR_QUIET)
  if(NOT built EQUAL 0)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_NM} --defined-only ${dir}/probe.so OUTPUT_VARIABLE symbols ERROR_QUIET)
  if(symbols MATCHES " [TtWw] (__cxa_throw|__cxa_get_globals|__cxa_allocate_exception)\n")
    message(WARNING "ulpscope: static C++ runtime: ${what} (${compiler}) links part of the C++ runtime into each shared library: the "
                    "Python module built with it crashes next to the system's libstdc++. Configure with the system "
                    "compiler for both, e.g. CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ (docs/python.md).")
  endif()
endfunction()
