# basin_test(NAME SOURCES a.cc b.cc [LABELS unit|slow|conformance] [LIBS ...])
# Declares a GoogleTest executable and registers it with ctest under its labels.
# Suites labelled "slow" can be skipped locally (make test-fast); CI runs everything.
function(basin_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE basin_all basin_testing ${T_LIBS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}"
                       ENVIRONMENT "BASIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# basin_tests_in_dir([LABELS ...] [LIBS ...]): one test executable per *_test.cc file in
# the calling folder. Files named *_slow_test.cc also get the "slow" label.
function(basin_tests_in_dir)
  cmake_parse_arguments(T "" "" "LABELS;LIBS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  foreach(test_source ${tests})
    get_filename_component(name ${test_source} NAME_WE)
    set(labels ${T_LABELS})
    if(name MATCHES "_slow_test$")
      list(APPEND labels slow)
    endif()
    basin_test(${name} SOURCES ${test_source} LABELS ${labels} LIBS ${T_LIBS})
  endforeach()
endfunction()
