// The one file of the program that installs the recorder before main().
#include <gpuprof/recorder_unit.hpp>
