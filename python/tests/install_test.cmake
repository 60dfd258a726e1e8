# Installs the python component into a scratch prefix and imports it from
# there with the interpreter the module was built for.
set(prefix ${BUILD_DIR}/python_install_test)
file(REMOVE_RECURSE ${prefix})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component python --prefix ${prefix}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${INSTALL_DIR} PYTHONDONTWRITEBYTECODE=1
          ${PYTHON} -c "import gpuprof, os; assert os.path.dirname(gpuprof.__file__) == os.path.join('${prefix}/${INSTALL_DIR}', 'gpuprof'), gpuprof.__file__; print(gpuprof.__file__)"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the installed package does not import from ${prefix}/${INSTALL_DIR}")
endif()
file(REMOVE_RECURSE ${prefix})
