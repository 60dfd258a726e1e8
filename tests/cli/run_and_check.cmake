# Runs one program and checks what a user of its command line relies on: the
# exit status, and the JSON it wrote, parsed (not grepped), field by field.
#
#   cmake -DPROGRAM=path "-DARGS=--json|-" -DEXIT=0 -DSTDOUT_JSON=ON
#         "-DCHECKS=schema=^gpuprof\\.bench$|benchmarks.0.fields.status=^oom$"
#         [-DJSON_FILE=path] [-DSTDOUT_REGEX=...] [-DSTDERR_REGEX=...] [-DENV=RANK=5|WORLD_SIZE=2]
#         [-DWORKING_DIRECTORY=dir] -P run_and_check.cmake
#
# Lists use "|" (a ";" does not survive add_test). ARGS: the arguments.
# EXIT: the expected status (required). STDOUT_JSON: standard output must be
# one JSON document and nothing else. JSON_FILE: a file that must hold one.
# CHECKS: "path=regex" items; path is dot-separated keys and array indices,
# the value (a JSON number, string or literal as text) must match the regex.
# A path ending in "#" checks the length of the array or object there, one
# ending in "@" its type (NULL, NUMBER, STRING, BOOLEAN, ARRAY, OBJECT).
# STDOUT_REGEX, STDERR_REGEX: must match standard output, standard error.
# ENV: variables set for the run.
# ABSENT: paths (relative to WORKING_DIRECTORY) that must not exist afterwards.
cmake_minimum_required(VERSION 3.19)  # string(JSON)

foreach(required PROGRAM EXIT)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "run_and_check.cmake: ${required} is required")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" checks "${CHECKS}")
string(REPLACE "|" ";" environment "${ENV}")
string(REPLACE "|" ";" absent "${ABSENT}")
foreach(assignment IN LISTS environment)
  string(FIND "${assignment}" "=" equals)
  string(SUBSTRING "${assignment}" 0 ${equals} name)
  math(EXPR value_start "${equals} + 1")
  string(SUBSTRING "${assignment}" ${value_start} -1 value)
  set(ENV{${name}} "${value}")
endforeach()
if(NOT WORKING_DIRECTORY)
  set(WORKING_DIRECTORY ".")
endif()

execute_process(COMMAND "${PROGRAM}" ${args}
                WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(what "${PROGRAM} ${args}")
if(NOT "${status}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "${what}: exit status ${status}, expected ${EXIT}\nstderr:\n${err}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "${what}: stdout does not match '${STDOUT_REGEX}':\n${out}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "${what}: stderr does not match '${STDERR_REGEX}':\n${err}")
endif()
foreach(path IN LISTS absent)
  if(EXISTS "${WORKING_DIRECTORY}/${path}" OR IS_SYMLINK "${WORKING_DIRECTORY}/${path}")
    message(FATAL_ERROR "${what}: created ${path}, which it must not")
  endif()
endforeach()

if(STDOUT_JSON)
  set(document "${out}")
  set(source "standard output")
elseif(DEFINED JSON_FILE)
  if(NOT EXISTS "${JSON_FILE}")
    message(FATAL_ERROR "${what}: ${JSON_FILE} was not written")
  endif()
  file(READ "${JSON_FILE}" document)
  set(source "${JSON_FILE}")
endif()
if(DEFINED source)
  string(JSON type ERROR_VARIABLE parse_error TYPE "${document}")
  if(parse_error OR NOT type STREQUAL "OBJECT")
    message(FATAL_ERROR "${what}: ${source} is not one JSON object (${parse_error}):\n${document}")
  endif()
  # string(JSON) parses a prefix; trailing text (a table after the document) must fail too.
  string(STRIP "${document}" stripped)
  string(LENGTH "${stripped}" length)
  math(EXPR last "${length} - 1")
  string(SUBSTRING "${stripped}" ${last} 1 closing)
  string(SUBSTRING "${stripped}" 0 1 opening)
  if(NOT opening STREQUAL "{" OR NOT closing STREQUAL "}")
    message(FATAL_ERROR "${what}: ${source} holds more than the JSON document:\n${document}")
  endif()
endif()

foreach(check IN LISTS checks)
  if(NOT DEFINED source)
    message(FATAL_ERROR "run_and_check.cmake: CHECKS need STDOUT_JSON or JSON_FILE")
  endif()
  string(FIND "${check}" "=" equals)
  string(SUBSTRING "${check}" 0 ${equals} path)
  math(EXPR regex_start "${equals} + 1")
  string(SUBSTRING "${check}" ${regex_start} -1 regex)
  set(mode GET)
  if(path MATCHES "#$")
    set(mode LENGTH)
  elseif(path MATCHES "@$")
    set(mode TYPE)
  endif()
  string(REGEX REPLACE "[#@]$" "" path "${path}")
  string(REPLACE "." ";" keys "${path}")
  string(JSON value ERROR_VARIABLE get_error ${mode} "${document}" ${keys})
  if(get_error)
    message(FATAL_ERROR "${what}: ${source} has no ${path}: ${get_error}")
  endif()
  if(NOT value MATCHES "${regex}")
    message(FATAL_ERROR "${what}: ${source}: ${path} is '${value}', expected to match '${regex}'")
  endif()
endforeach()
message(STATUS "${what}: exit ${status}, ${source} checked")
