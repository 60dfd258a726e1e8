// The one file of a program built with GPUPROF_RECORDER_IN_ONE_UNIT that
// installs the recorder before main() (gpuprof_early_scope_one_unit, gpuprof_tests).
#include <gpuprof/recorder_unit.hpp>
