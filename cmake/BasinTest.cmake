# basin_test(NAME SOURCES a.cc b.cc [LABELS unit|slow|conformance] [LIBS ...])
# Declares a GoogleTest executable and registers it with ctest under its labels.
# Suites labelled "slow" can be skipped locally (make test-fast); CI runs everything.
function(basin_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE basin_core basin_testing ${T_LIBS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}"
                       ENVIRONMENT "BASIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
