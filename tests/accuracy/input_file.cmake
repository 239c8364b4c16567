# Tests of accuracy/input_file.cpp (--input), included from this folder's CMakeLists.txt.
add_executable(input_file_tests ${CMAKE_CURRENT_LIST_DIR}/input_file_test.cpp)
target_link_libraries(input_file_tests PRIVATE ulpscope_input_file GTest::gtest_main)
gtest_discover_tests(input_file_tests)
target_compile_definitions(input_file_tests PRIVATE ULPSCOPE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data")
