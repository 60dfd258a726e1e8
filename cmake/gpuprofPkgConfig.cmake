# gpuprof.pc and gpuprof-cupti.pc: the flags the CMake targets carry, for
# builds without CMake (pkg-config, Meson's dependency(), Make). Written at
# configure time from what find_package(CUDAToolkit) found:
#   gpuprof.pc        the headers, GPUPROF_WITH_CUDA=1 and GPUPROF_WITH_NVTX=1
#                     with the toolkit's include directory, cudart with its
#                     library directory; -ldl and -lpthread. Without the
#                     toolkit: the headers, -ldl and -lpthread only.
#   gpuprof-cupti.pc  (with the toolkit only) GPUPROF_WITH_CUPTI=1 and -lcupti.
# -lpthread rather than -pthread: nvcc refuses -pthread, and both compilers
# take the flags as they are. The prefix is ${pcfiledir} relative, so a
# copied install tree works; the toolkit's directories stay absolute (it is
# not part of the tree).
include_guard(GLOBAL)

# " -I<dir>" for each directory not seen yet (the toolkit lists one directory
# under two names at times: include/ and targets/<arch>/include/).
function(_gpuprof_pc_include_flags out)
  set(flags "")
  set(seen "")
  foreach(directory IN LISTS ARGN)
    if(directory AND NOT directory IN_LIST seen)
      list(APPEND seen "${directory}")
      string(APPEND flags " -I${directory}")
    endif()
  endforeach()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

function(gpuprof_write_pkg_config)
  set(pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  if(IS_ABSOLUTE "${pc_dir}")
    message(FATAL_ERROR "gpuprof's pkg-config files need a relative CMAKE_INSTALL_LIBDIR, not '${CMAKE_INSTALL_LIBDIR}'")
  endif()
  # From <prefix>/<libdir>/pkgconfig back to <prefix>: "../.." for lib/pkgconfig.
  file(RELATIVE_PATH GPUPROF_PC_PREFIX_FROM_PCDIR "/prefix/${pc_dir}" "/prefix")
  string(REGEX REPLACE "/$" "" GPUPROF_PC_PREFIX_FROM_PCDIR "${GPUPROF_PC_PREFIX_FROM_PCDIR}")
  set(GPUPROF_PC_CFLAGS "")
  set(GPUPROF_PC_LIBS "")
  if(GPUPROF_HAVE_CUDA)
    _gpuprof_pc_include_flags(cuda_includes ${CUDAToolkit_INCLUDE_DIRS})
    set(GPUPROF_PC_CFLAGS "${cuda_includes} -DGPUPROF_WITH_CUDA=1 -DGPUPROF_WITH_NVTX=1")
    set(GPUPROF_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
    get_target_property(cupti_includes CUDA::cupti INTERFACE_INCLUDE_DIRECTORIES)
    list(REMOVE_ITEM cupti_includes ${CUDAToolkit_INCLUDE_DIRS})
    _gpuprof_pc_include_flags(GPUPROF_PC_CUPTI_CFLAGS ${cupti_includes})
    get_filename_component(cupti_dir "${CUDA_cupti_LIBRARY}" DIRECTORY)
    set(GPUPROF_PC_CUPTI_LIBS "")
    if(NOT cupti_dir STREQUAL CUDAToolkit_LIBRARY_DIR)
      set(GPUPROF_PC_CUPTI_LIBS " -L${cupti_dir}")
    endif()
    configure_file(${PROJECT_SOURCE_DIR}/cmake/pkgconfig/gpuprof-cupti.pc.in
                   ${PROJECT_BINARY_DIR}/pkgconfig/gpuprof-cupti.pc @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/gpuprof-cupti.pc DESTINATION ${pc_dir})
  else()
    file(REMOVE ${PROJECT_BINARY_DIR}/pkgconfig/gpuprof-cupti.pc)  # from an earlier configure with CUDA
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/pkgconfig/gpuprof.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/gpuprof.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/gpuprof.pc DESTINATION ${pc_dir})
endfunction()
