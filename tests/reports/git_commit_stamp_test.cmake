# cmake/write_git_commit.cmake on a scratch repository: the header names HEAD,
# "-dirty" for a changed tracked file and for an untracked one, a new commit
# after committing, "unknown" outside git; an unchanged name leaves the file
# untouched (nothing recompiles).
#   cmake -DSCRIPT=<write_git_commit.cmake> -DWORK=<scratch dir> -P git_commit_stamp_test.cmake
cmake_minimum_required(VERSION 3.25)
find_program(GIT git)
if(NOT GIT)
  message("SKIP: git not found")  # the test's SKIP_REGULAR_EXPRESSION
  return()
endif()
file(REMOVE_RECURSE "${WORK}")
# WORK may sit inside a checkout (the build tree): git must not find it from
# WORK/plain, nor ulpscope's own repository.
set(ENV{GIT_CEILING_DIRECTORIES} "${WORK}")
file(MAKE_DIRECTORY "${WORK}/repo" "${WORK}/plain")
set(header "${WORK}/ulpscope_git_commit.hpp")

function(git)
  execute_process(COMMAND "${GIT}" -c user.name=t -c user.email=t@t -c commit.gpgsign=false ${ARGN}
                  WORKING_DIRECTORY "${WORK}/repo" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ${ARGN}: ${err}")
  endif()
  set(git_out "${out}" PARENT_SCOPE)
endfunction()

# Runs the script on DIR and checks the name it wrote.
function(expect_name dir want what)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${dir} -DOUTPUT=${header} -P "${SCRIPT}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: the script failed: ${err}")
  endif()
  file(STRINGS "${header}" line REGEX "^#define ULPSCOPE_GIT_COMMIT ")
  if(NOT line STREQUAL "#define ULPSCOPE_GIT_COMMIT \"${want}\"")
    message(FATAL_ERROR "${what}: expected \"${want}\", the header says: ${line}")
  endif()
endfunction()

expect_name("${WORK}/plain" "unknown" "outside git")

git(init -q .)
file(WRITE "${WORK}/repo/a.txt" "one\n")
git(add a.txt)
git(commit -q -m one)
git(rev-parse --short=12 HEAD)
set(first "${git_out}")
string(LENGTH "${first}" len)
if(NOT len EQUAL 12)
  message(FATAL_ERROR "unexpected short hash '${first}'")
endif()
expect_name("${WORK}/repo" "${first}" "a clean checkout")

# Unchanged name: the file is not rewritten (its time stays).
file(TIMESTAMP "${header}" t0 "%s")
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1.1)
expect_name("${WORK}/repo" "${first}" "a clean checkout, again")
file(TIMESTAMP "${header}" t1 "%s")
if(NOT t0 STREQUAL t1)
  message(FATAL_ERROR "the header was rewritten with the same name (${t0} -> ${t1})")
endif()

file(WRITE "${WORK}/repo/a.txt" "two\n")
expect_name("${WORK}/repo" "${first}-dirty" "a changed tracked file")
git(checkout -q -- a.txt)
expect_name("${WORK}/repo" "${first}" "the change undone")

file(WRITE "${WORK}/repo/new.cu" "\n")
expect_name("${WORK}/repo" "${first}-dirty" "an untracked file")
file(WRITE "${WORK}/repo/.gitignore" "/new.cu\n/build/\n")
git(add .gitignore)
git(commit -q -m ignore)
git(rev-parse --short=12 HEAD)
set(second "${git_out}")
if(second STREQUAL first)
  message(FATAL_ERROR "the second commit has the first's name")
endif()
file(MAKE_DIRECTORY "${WORK}/repo/build")
file(WRITE "${WORK}/repo/build/x.o" "\n")
expect_name("${WORK}/repo" "${second}" "a new commit, ignored files present")
message("write_git_commit.cmake: unknown, ${first}, ${first}-dirty, ${second} as expected")
