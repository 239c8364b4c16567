# The command line of accuracy_report (written by the lead; included from CMakeLists.txt).
add_executable(cli_tests ${CMAKE_CURRENT_LIST_DIR}/cli_options_test.cpp)
target_link_libraries(cli_tests PRIVATE ulpscope_cli GTest::gtest_main)
gtest_discover_tests(cli_tests)

# --recommend (the lead's): the choice rule on hand-made cells, and one real CPU run.
add_executable(recommend_tests ${CMAKE_CURRENT_LIST_DIR}/recommend_test.cpp)
target_link_libraries(recommend_tests PRIVATE ulpscope_recommend GTest::gtest_main)
gtest_discover_tests(recommend_tests PROPERTIES TIMEOUT ${ULPSCOPE_LONG_TEST_TIMEOUT})

# --input through the real program (the lead's).
if(TARGET accuracy_report)
  add_executable(input_cli_tests ${CMAKE_CURRENT_LIST_DIR}/input_cli_test.cpp)
  target_link_libraries(input_cli_tests PRIVATE nlohmann_json::nlohmann_json GTest::gtest_main)
  target_compile_definitions(input_cli_tests PRIVATE ULPSCOPE_ACCURACY_REPORT="$<TARGET_FILE:accuracy_report>")
  add_dependencies(input_cli_tests accuracy_report)
  gtest_discover_tests(input_cli_tests)
endif()

# --recommend through the real program: JSON, --dist, --eps, exit statuses.
if(TARGET accuracy_report)
  add_executable(recommend_cli_tests ${CMAKE_CURRENT_LIST_DIR}/recommend_cli_test.cpp)
  target_link_libraries(recommend_cli_tests PRIVATE nlohmann_json::nlohmann_json GTest::gtest_main)
  target_compile_definitions(recommend_cli_tests PRIVATE ULPSCOPE_ACCURACY_REPORT="$<TARGET_FILE:accuracy_report>")
  add_dependencies(recommend_cli_tests accuracy_report)
  gtest_discover_tests(recommend_cli_tests PROPERTIES TIMEOUT ${ULPSCOPE_LONG_TEST_TIMEOUT})
endif()
