# Writes the header that names the commit accuracy_report is built from, at
# build time (not configure time: a build tree outlives many commits, and a
# report's header must name the one its kernels came from).
#   cmake -DSOURCE_DIR=<repo> -DOUTPUT=<header> -P write_git_commit.cmake
# The name is `git rev-parse --short=12 HEAD`, with "-dirty" when tracked files
# differ from HEAD or untracked files that git does not ignore are present
# (they are built too); "unknown" outside a git checkout or without git. The
# file is rewritten only when the name changes, so an unchanged commit
# recompiles nothing.
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT OUTPUT)
  message(FATAL_ERROR "write_git_commit.cmake: SOURCE_DIR and OUTPUT are required")
endif()
set(commit "unknown")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND head)
    set(commit "${head}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" status --porcelain WORKING_DIRECTORY "${SOURCE_DIR}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT rc EQUAL 0 OR changes)
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "#pragma once\n// Written by cmake/write_git_commit.cmake at build time.\n#define ULPSCOPE_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
