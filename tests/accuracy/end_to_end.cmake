# End-to-end facts of the run matrix on the CPU backend (written by the lead;
# included from CMakeLists.txt).
add_executable(end_to_end_tests ${CMAKE_CURRENT_LIST_DIR}/end_to_end_test.cpp)
target_link_libraries(end_to_end_tests PRIVATE ulpscope_accuracy ulpscope_reports GTest::gtest_main)
gtest_discover_tests(end_to_end_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${ULPSCOPE_LONG_TEST_TIMEOUT})
