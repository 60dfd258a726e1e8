#!/usr/bin/env bash
# Compile cost of every public header against the baseline translation unit:
#   bench/compile_cost/run.sh [--only scope.hpp,gpuprof.hpp] [--repeat 3] [out.json]
# See compile_cost.py for the options.
exec python3 "$(dirname "$0")/compile_cost.py" "$@"
