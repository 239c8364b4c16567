# cmake --install: headers, static libraries, accuracy_report and a CMake
# package, so that another project can find_package(ulpscope) and measure its
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
foreach(_dir formats kernels reference accuracy reports plugin testing)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ulpscope/${_dir}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endforeach()

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
