#!/usr/bin/env bash
# The OpenCL implementations of the portability matrix (tools/run_matrix.sh),
# installed and registered idempotently, one ICD directory each:
#
#   build/icd/pocl/pocl.icd          PoCL (Debian pocl-opencl-icd): the main test runs' device
#   build/icd/intel/intel.icd        Intel's OpenCL CPU runtime (PyPI intel-opencl-rt, with
#                                    intel-cmplr-lib-rt for libimf/libsvml/libirng/libintlc,
#                                    which it links but does not declare) in .venv-intel-ocl
#   build/icd/oclgrind/oclgrind.icd  Oclgrind (Debian oclgrind), the OpenCL device simulator
#
# Select one with OCL_ICD_VENDORS=$PWD/build/icd/NAME (the ICD loader then
# reads that directory instead of /etc/OpenCL/vendors). Intel's library finds
# its dependencies through its RUNPATH ($ORIGIN), so it needs no LD_LIBRARY_PATH.
# Each is then verified through the library: `python -m tflite_gpu devices`
# must list that implementation's platform (skipped, with a note, when
# .venv does not exist yet).
#
# Usage: tools/opencl_impls.sh [NAME...]    (default: pocl intel oclgrind)
# Exit status: 0 when every one named works, else 1 (the others are still set up).
# Env:   INTEL_OCL_VERSION   the intel-opencl-rt / intel-cmplr-lib-rt version
#                            (default below: the one checked on an AMD EPYC)
#        PYTHON              the python that makes .venv-intel-ocl (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
INTEL_OCL_VERSION="${INTEL_OCL_VERSION:-2026.2.0}"
PYTHON="${PYTHON:-python3}"
NAMES="${*:-pocl intel oclgrind}"

apt_install() {  # apt_install PACKAGE...: installs the missing ones
  local missing="" p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] && return 0
  echo "opencl_impls: installing system packages:$missing"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

find_lib() {  # find_lib NAME: absolute path of a shared library file in the usual directories
  case "$1" in /*) [ -e "$1" ] && { echo "$1"; return 0; } ;; esac
  local d
  for d in /usr/lib/*-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  return 1
}

write_icd() {  # write_icd NAME LIBRARY: build/icd/NAME/NAME.icd naming LIBRARY (rewritten only if it changes)
  local dir="$ROOT/build/icd/$1"
  mkdir -p "$dir"
  if [ "$(cat "$dir/$1.icd" 2>/dev/null)" != "$2" ]; then
    echo "$2" >"$dir/$1.icd"
  fi
}

verify() {  # verify NAME PLATFORM_SUBSTRING
  local dir="$ROOT/build/icd/$1"
  if [ ! -x .venv/bin/python ]; then
    echo "opencl_impls: $1 registered in $dir (not verified: no .venv yet)"
    return 0
  fi
  local out
  if ! out=$(OCL_ICD_VENDORS="$dir" .venv/bin/python -m tflite_gpu devices 2>&1) || ! grep -q "$2" <<<"$out"; then
    echo "opencl_impls: $1 does not work: OCL_ICD_VENDORS=$dir python -m tflite_gpu devices said:" >&2
    echo "$out" >&2
    return 1
  fi
  echo "opencl_impls: $1 ok: $(grep -m1 '^\[0\]' <<<"$out") - $(grep -m1 'version ' <<<"$out" | sed 's/^ *version *//')"
}

setup_pocl() {
  apt_install ocl-icd-libopencl1 pocl-opencl-icd || return 1
  local name lib
  name=$(head -n1 /etc/OpenCL/vendors/pocl.icd)
  lib=$(find_lib "$name") || { echo "opencl_impls: cannot find PoCL's $name" >&2; return 1; }
  write_icd pocl "$lib"
  verify pocl "Portable Computing Language"
}

setup_oclgrind() {
  apt_install ocl-icd-libopencl1 oclgrind || return 1
  local lib
  lib=$(dpkg -L oclgrind liboclgrind-21.10 2>/dev/null | grep -m1 '/liboclgrind-rt-icd\.so$' || true)
  [ -n "$lib" ] || lib=$(find_lib oclgrind/liboclgrind-rt-icd.so) ||
    { echo "opencl_impls: cannot find liboclgrind-rt-icd.so" >&2; return 1; }
  write_icd oclgrind "$lib"
  verify oclgrind "Oclgrind"
}

setup_intel() {
  apt_install ocl-icd-libopencl1 || return 1
  local venv="$ROOT/.venv-intel-ocl"
  local have=""
  [ -x "$venv/bin/python" ] && have=$("$venv/bin/python" -m pip show intel-opencl-rt intel-cmplr-lib-rt 2>/dev/null |
    awk '/^Version:/ {print $2}' | tr '\n' ' ')
  if [ "$have" != "$INTEL_OCL_VERSION $INTEL_OCL_VERSION " ] || [ ! -e "$venv/lib/libintelocl.so" ]; then
    echo "opencl_impls: installing intel-opencl-rt and intel-cmplr-lib-rt $INTEL_OCL_VERSION into .venv-intel-ocl"
    [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
      "intel-opencl-rt==$INTEL_OCL_VERSION" "intel-cmplr-lib-rt==$INTEL_OCL_VERSION" || return 1
  fi
  if ldd "$venv/lib/libintelocl.so" | grep -q 'not found'; then
    echo "opencl_impls: libintelocl.so misses libraries:" >&2
    ldd "$venv/lib/libintelocl.so" | grep 'not found' >&2
    return 1
  fi
  write_icd intel "$venv/lib/libintelocl.so"
  verify intel "Intel(R) OpenCL"
}

status=0
for name in $NAMES; do
  case "$name" in
    pocl|intel|oclgrind) "setup_$name" || status=1 ;;
    *) echo "opencl_impls: unknown implementation '$name' (pocl, intel, oclgrind)" >&2; status=2 ;;
  esac
done
exit $status
