# The build's facts every report carries (environment.hpp): the compiler
# flags, the build type and the git revision of this checkout, as compile
# definitions of the gpuprof target in the build tree only (an installed
# package leaves them to its consumer). Read at configure time: re-run cmake
# to refresh the revision.
string(TOUPPER "${CMAKE_BUILD_TYPE}" gpuprof_build_type_upper)
string(STRIP "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${gpuprof_build_type_upper}}" gpuprof_build_flags)
set(gpuprof_git_revision "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                  OUTPUT_VARIABLE gpuprof_git_revision OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE gpuprof_git_status)
  if(NOT gpuprof_git_status EQUAL 0)
    set(gpuprof_git_revision "")
  endif()
endif()
# Characters a generator expression would read as its own syntax.
foreach(var gpuprof_build_flags gpuprof_git_revision)
  string(REPLACE ">" "$<ANGLE-R>" ${var} "${${var}}")
  string(REPLACE "," "$<COMMA>" ${var} "${${var}}")
  string(REPLACE ";" "$<SEMICOLON>" ${var} "${${var}}")
  string(REPLACE "\"" "\\\"" ${var} "${${var}}")
endforeach()
target_compile_definitions(gpuprof INTERFACE
  "$<BUILD_INTERFACE:GPUPROF_BUILD_CXX_FLAGS=\"${gpuprof_build_flags}\">"
  "$<BUILD_INTERFACE:GPUPROF_BUILD_TYPE=\"${CMAKE_BUILD_TYPE}\">"
  "$<BUILD_INTERFACE:GPUPROF_GIT_REVISION=\"${gpuprof_git_revision}\">")
