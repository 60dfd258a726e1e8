# The whole model against PyTorch (bench/tests/torch_agreement.sh): one dumped
# training step checked by torch_reference.py --check-dump. Skipped (exit 77)
# where python3 has no PyTorch; the GPU entry (label gpu) also where no GPU
# can exist. The CPU backend's entry runs wherever PyTorch is installed. Only
# values are checked (within torch_reference.py's tolerances), so the GPU
# entry shares the GPU (SHARES_GPU) like the kernel tests.
set(transformer_torch_script ${PROJECT_SOURCE_DIR}/examples/transformer/scripts/torch_reference.py)
add_test(NAME transformer_torch_agreement_cpu
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/torch_agreement.sh cpu - $<TARGET_FILE:transformer_bench>
          ${transformer_torch_script} ${CMAKE_CURRENT_BINARY_DIR}/torch_agreement_cpu)
set_tests_properties(transformer_torch_agreement_cpu PROPERTIES
  SKIP_RETURN_CODE ${GPUPROF_SKIP_RETURN_CODE} TIMEOUT 300)
if(TARGET gpuprof_gpu_probe)
  gpuprof_add_gpu_test(transformer_torch_agreement_gpu SHARES_GPU
    bash ${CMAKE_CURRENT_LIST_DIR}/torch_agreement.sh cuda $<TARGET_FILE:gpuprof_gpu_probe>
         $<TARGET_FILE:transformer_bench> ${transformer_torch_script}
         ${CMAKE_CURRENT_BINARY_DIR}/torch_agreement_gpu)
  set_tests_properties(transformer_torch_agreement_gpu PROPERTIES TIMEOUT 300)
endif()
