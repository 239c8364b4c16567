# The fuzzers' seed corpus, made from tests/data at configure time: DIR/<target>/
# holds the .npy fixtures (for both file readers), the stored reports
# (tests/data/reports, written by accuracy_report) and each report's
# header.settings object (what a gate reads from a baseline).
function(ulpscope_fuzz_seed_corpus dir)
  set(data ${PROJECT_SOURCE_DIR}/tests/data)
  file(GLOB npy_files CONFIGURE_DEPENDS ${data}/npy/*.npy)
  file(GLOB report_files CONFIGURE_DEPENDS ${data}/reports/*.json)
  file(REMOVE_RECURSE ${dir})
  file(COPY ${npy_files} DESTINATION ${dir}/npy_reader)
  file(COPY ${npy_files} DESTINATION ${dir}/raw_reader)
  file(COPY ${report_files} DESTINATION ${dir}/report_reader)
  foreach(report ${report_files})
    file(READ ${report} text)
    string(JSON settings GET "${text}" header settings)
    get_filename_component(name ${report} NAME)
    file(WRITE ${dir}/baseline_settings/${name} "${settings}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${report})
  endforeach()
endfunction()
