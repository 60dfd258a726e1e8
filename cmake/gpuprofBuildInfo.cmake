# The build's facts every report carries (environment.hpp): the compiler
# flags, the build type and the git revision of the project being built, as
# compile definitions on a gpuprof target:
#   GPUPROF_BUILD_CXX_FLAGS  CMAKE_<LANG>_FLAGS and CMAKE_<LANG>_FLAGS_<CONFIG>
#                            of the translation unit's language (CXX or CUDA)
#   GPUPROF_BUILD_TYPE       the configuration ($<CONFIG>: right for
#                            multi-config generators too)
#   GPUPROF_GIT_REVISION     `git describe --always --dirty` of the top-level
#                            project's source tree; "" outside a git checkout
# They describe whoever builds: gpuprof's own tree, a project that pulls it in
# with add_subdirectory or FetchContent, or one that finds the installed
# package (gpuprofConfig.cmake calls this with the imported target). The
# values are read when that project's configure step ends (cmake_language
# DEFER), so flags set after find_package() count; the revision is that of
# the last configure: a commit alone changes no definition and rebuilds
# nothing, and re-running cmake refreshes it.
include_guard(GLOBAL)

# `value` made safe inside a generator expression and a quoted definition.
function(_gpuprof_build_info_escape variable)
  set(value "${${variable}}")
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE ">" "$<ANGLE-R>" value "${value}")
  string(REPLACE "," "$<COMMA>" value "${value}")
  string(REPLACE ";" "$<SEMICOLON>" value "${value}")
  set(${variable} "${value}" PARENT_SCOPE)
endfunction()

# The flags of `lang` for the configuration being built, as a generator expression.
function(_gpuprof_build_info_flags out lang)
  set(configs Debug Release RelWithDebInfo MinSizeRel)
  string(STRIP "${CMAKE_${lang}_FLAGS}" base)
  _gpuprof_build_info_escape(base)
  set(expression "$<$<NOT:$<CONFIG:${configs}>>:${base}>")
  foreach(config IN LISTS configs)
    string(TOUPPER "${config}" upper)
    string(STRIP "${CMAKE_${lang}_FLAGS} ${CMAKE_${lang}_FLAGS_${upper}}" flags)
    _gpuprof_build_info_escape(flags)
    string(APPEND expression "$<$<CONFIG:${config}>:${flags}>")
  endforeach()
  string(REPLACE ";" "," expression "${expression}")  # $<CONFIG:a,b,...>
  set(${out} "${expression}" PARENT_SCOPE)
endfunction()

# Runs at the end of the configure step (see gpuprof_add_build_info).
function(_gpuprof_build_info_now target)
  get_target_property(done ${target} GPUPROF_BUILD_INFO)
  if(done)
    return()  # a second find_package() in another directory: the first one's values stand
  endif()
  set_property(TARGET ${target} PROPERTY GPUPROF_BUILD_INFO ON)

  set(revision "")
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
                    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
                    OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      set(revision "")
    endif()
  endif()
  _gpuprof_build_info_escape(revision)

  _gpuprof_build_info_flags(cxx_flags CXX)
  if(CMAKE_CUDA_COMPILER_LOADED)
    _gpuprof_build_info_flags(cuda_flags CUDA)
    set(flags "$<$<COMPILE_LANGUAGE:CUDA>:${cuda_flags}>$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:${cxx_flags}>")
  else()
    set(flags "${cxx_flags}")
  endif()
  set(definitions
    "GPUPROF_BUILD_CXX_FLAGS=\"${flags}\""
    "GPUPROF_BUILD_TYPE=\"$<CONFIG>\""
    "GPUPROF_GIT_REVISION=\"${revision}\"")
  get_target_property(imported ${target} IMPORTED)
  if(NOT imported)  # gpuprof's own target: its export must not carry this build's values
    list(TRANSFORM definitions PREPEND "$<BUILD_INTERFACE:")
    list(TRANSFORM definitions APPEND ">")
  endif()
  target_compile_definitions(${target} INTERFACE ${definitions})
endfunction()

# Gives `target` the definitions above, filled in when the configure step of
# the directory that sees it ends: the top-level directory for gpuprof's own
# target (add_subdirectory and FetchContent included), the directory that
# called find_package() for the imported one.
function(gpuprof_add_build_info target)
  get_target_property(imported ${target} IMPORTED)
  set(directory "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT imported)
    set(directory "${CMAKE_SOURCE_DIR}")
  endif()
  # A deferred call reads its arguments' variables when it runs: the target's
  # name goes in as text.
  cmake_language(EVAL CODE
    "cmake_language(DEFER DIRECTORY [[${directory}]] CALL _gpuprof_build_info_now [[${target}]])")
endfunction()
