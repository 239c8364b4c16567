# The CI gate as the workflow runs it: .github/workflows/accuracy.yml must
# call tools/ci-gate.sh, and the script must pass against the committed
# baseline with this build, writing the summary to --gate-summary and to
# $GITHUB_STEP_SUMMARY.
# cmake -DSOURCE_DIR=... -DTOOL=accuracy_report -DWORK=dir -P ci_gate_test.cmake
file(READ ${SOURCE_DIR}/.github/workflows/accuracy.yml workflow)
string(FIND "${workflow}" "run: tools/ci-gate.sh build/cpu-only/reports/accuracy_report gate " at)
if(at EQUAL -1)
  message(FATAL_ERROR "accuracy.yml does not run tools/ci-gate.sh on build/cpu-only/reports/accuracy_report")
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/step-summary.md "an earlier step\n")
set(ENV{GITHUB_STEP_SUMMARY} ${WORK}/step-summary.md)
execute_process(COMMAND bash ${SOURCE_DIR}/tools/ci-gate.sh ${TOOL} ${WORK}/gate "ctest @ build"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "tools/ci-gate.sh exited ${status} (0 expected: the baseline is stale if a cell "
                      "regressed; refresh it with tools/ci-gate.sh --refresh):\n${out}${err}")
endif()
file(READ ${WORK}/gate/gate.md summary)
file(READ ${WORK}/step-summary.md step)
foreach(want "### ulpscope gate: ✅ pass · ctest @ build" "**0 of " "- current: **ctest @ build**")
  string(FIND "${summary}" "${want}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "gate.md lacks \"${want}\":\n${summary}")
  endif()
endforeach()
if(NOT step STREQUAL "an earlier step\n${summary}\n")
  message(FATAL_ERROR "$GITHUB_STEP_SUMMARY was not appended to:\n${step}")
endif()
if(NOT EXISTS ${WORK}/gate/current.json)
  message(FATAL_ERROR "no current.json")
endif()
