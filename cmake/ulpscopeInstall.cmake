# cmake --install: the API's headers, the shared libraries, accuracy_report
# and a CMake package, so that another project can find_package(ulpscope) and measure its
# own kernels (docs/byo.md). Exported targets are ulpscope::<name>.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(ULPSCOPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ulpscope)

set(_ulpscope_exported
  formats ulpscope_formats  reference ulpscope_reference  kernels ulpscope_kernels
  input_file ulpscope_input_file  accuracy ulpscope_accuracy  reports ulpscope_reports
  plugin_abi ulpscope_plugin_abi  plugin ulpscope_plugin  gtest ulpscope_gtest
  accuracy_report accuracy_report)
# The scans' models and kernels (kernels/CMakeLists.txt), which ulpscope_kernels links.
list(APPEND _ulpscope_exported scan_model ulpscope_scan_model)
# The all-reduce models (kernels/CMakeLists.txt), which ulpscope_accuracy links.
list(APPEND _ulpscope_exported allreduce_model ulpscope_allreduce_model)
# The NCCL runner, or its stand-in without NCCL (kernels/allreduce/nccl), which ulpscope_accuracy links.
list(APPEND _ulpscope_exported nccl ulpscope_nccl)
if(TARGET ulpscope_scan_kernels)
  list(APPEND _ulpscope_exported scan_kernels ulpscope_scan_kernels)
endif()
set(_ulpscope_targets "")
while(_ulpscope_exported)
  list(POP_FRONT _ulpscope_exported _name _target)
  set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_name})
  # Include folders of the build (the source tree, CCCL's) mean nothing to
  # an installed package: they stay build-only.
  get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
  if(_dirs)
    set(_wrapped "")
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^\\$<(BUILD|INSTALL)_INTERFACE:")
        list(APPEND _wrapped "${_dir}")
      else()
        list(APPEND _wrapped "$<BUILD_INTERFACE:${_dir}>")
      endif()
    endforeach()
    set_property(TARGET ${_target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_wrapped}")
  endif()
  list(APPEND _ulpscope_targets ${_target})
endwhile()

# Headers keep their folders under include/ulpscope: users write
# <ulpscope/accuracy/evaluate_kernel.hpp>, and the headers' own
# "formats/dtype.hpp" resolve from include/ulpscope.
foreach(_target ulpscope_formats ulpscope_plugin_abi)
  target_include_directories(${_target} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ulpscope> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
# The installed headers are the documented API (docs/byo.md) and the headers
# they include, found by following their #include "..." lines; the kernels'
# and the measurement's inner headers stay in the source tree.
set(ULPSCOPE_PUBLIC_HEADERS
  accuracy/user_kernel.hpp accuracy/evaluate_kernel.hpp    # your kernel through the matrix
  testing/ulpscope_gtest.hpp                               # EXPECT_ULPSCOPE_WITHIN_ULPS
  plugin/ulpscope_plugin.h plugin/kernel_lib.hpp           # the plug-in ABI and its loader
  reports/json_report.hpp reports/markdown_report.hpp reports/gate.hpp  # reports and the gate
  formats/dtype.hpp formats/typed_array.hpp formats/small_float.hpp formats/hex_float.hpp
  formats/round_to_dtype.hpp formats/round_trip_decimal.hpp   # the number formats
  reference/op_reference.hpp reference/exact_sum.hpp reference/round_to_format.hpp)  # the exact operations
if(ULPSCOPE_HAVE_CUDA)
  list(APPEND ULPSCOPE_PUBLIC_HEADERS kernels/exact.hpp)  # the exact reductions on the caller's device arrays
endif()
set(_todo ${ULPSCOPE_PUBLIC_HEADERS})
set(_installed_headers "")
while(_todo)
  list(POP_FRONT _todo _header)
  if(_header IN_LIST _installed_headers)
    continue()
  endif()
  list(APPEND _installed_headers ${_header})
  file(STRINGS ${PROJECT_SOURCE_DIR}/${_header} _includes REGEX "^[ \t]*#[ \t]*include \"")
  foreach(_line IN LISTS _includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include \"([^\"]+)\".*" "\\1" _included "${_line}")
    if(EXISTS ${PROJECT_SOURCE_DIR}/${_included})
      list(APPEND _todo ${_included})
    endif()
  endforeach()
endwhile()
foreach(_header IN LISTS _installed_headers)
  get_filename_component(_dir ${_header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${_header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ulpscope/${_dir})
endforeach()
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_installed_headers})

# The installed program and libraries find the suite's shared libraries
# beside them (lib/), wherever the prefix is moved.
foreach(_target IN LISTS _ulpscope_shared_libraries)
  set_target_properties(${_target} PROPERTIES INSTALL_RPATH "$ORIGIN")
endforeach()
set_target_properties(accuracy_report PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
# The child that runs plug-ins' functions (plugin/kernel_host.hpp) is found
# beside accuracy_report.
set_target_properties(ulpscope-kernel-host PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS ulpscope-kernel-host RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(TARGETS ${_ulpscope_targets} EXPORT ulpscopeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT ulpscopeTargets NAMESPACE ulpscope:: DESTINATION ${ULPSCOPE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ulpscopeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ulpscopeConfig.cmake INSTALL_DESTINATION ${ULPSCOPE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ulpscopeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ulpscopeConfig.cmake ${PROJECT_BINARY_DIR}/ulpscopeConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindMPFR.cmake
        DESTINATION ${ULPSCOPE_INSTALL_CMAKEDIR})
