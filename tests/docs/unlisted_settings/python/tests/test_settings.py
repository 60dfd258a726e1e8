# tests may use settings of their own
import os
os.environ.get("GPUPROF_TEST_ONLY")
