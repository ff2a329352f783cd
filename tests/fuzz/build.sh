#!/usr/bin/env bash
# Builds the libFuzzer harnesses with Debian's clang (clang-15 or clang):
#   build-fuzz/fuzz_options   the option parser
set -euo pipefail
cd "$(dirname "$0")/../.."
CLANG="${CLANG:-$(command -v clang || command -v clang-15 || true)}"
[ -n "$CLANG" ] || { echo "no clang (apt-get install clang)" >&2; exit 2; }
mkdir -p build-fuzz
"$CLANG" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Idelegate_c -Idelegate_c/include -Iopencl_kernels tests/fuzz/fuzz_options.c delegate_c/config/options.c delegate_c/util/log.c \
  delegate_c/cl/target.c \
  -o build-fuzz/fuzz_options
