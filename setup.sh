#!/usr/bin/env bash
# syncsim set-up: installs what is missing (Debian 12, as root), configures, builds, then
#   ./setup.sh run [ARGS...]   runs `syncsim run` (the built-in default scenario unless ARGS say otherwise)
#   ./setup.sh test            builds with warnings as errors and runs the whole test suite through ctest
#                              (.ci/run then adds the sanitizer build, format check, clang-tidy, fuzzing)
#   ./setup.sh build           only installs and builds (Release, build/release)
#   ./setup.sh ci-tools        only installs, including what .ci/run needs beyond `test` (clang tools)
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(g++ cmake ninja-build libboost-graph-dev libboost-program-options-dev libeigen3-dev
          libyaml-cpp-dev doctest-dev nlohmann-json3-dev
          libprotobuf-dev protobuf-compiler       # Chakra execution traces (chakra/)
          openmpi-bin libopenmpi-dev gnuplot-nox  # MPI sweeps (optional in CMake), `syncsim plot`
          ccache                                  # rebuilds and CI's sanitizer/fuzz builds
          pybind11-dev python3-pybind11 python3-dev  # the Python module (python/, docs/python.md)
          python3-pandas)                         # its to_dataframe() (about 11 MB download)
# `./setup.sh test` (and CI): the browser test of `syncsim report` pages (tests/cli/test_report_browser.sh).
TEST_PACKAGES=(chromium)
# .ci/run only: format check, clang-tidy, libFuzzer targets (libclang-rt is only a Recommends of clang).
CI_PACKAGES=(clang clang-format clang-tidy libclang-rt-14-dev)

install_missing() {  # install_missing PACKAGE...
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

jobs=$(nproc 2>/dev/null || echo 2)

build() {  # build PRESET
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j "$jobs"
}

# Where a CUDA toolkit is installed, the calibration probes (calibration/probes/*.cu) must compile
# too; they are never run here (that needs a GPU). Machines without nvcc skip this step.
cuda_probes() {
  local nvcc
  nvcc=$(command -v nvcc || true)
  [ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; }
  if [ -z "$nvcc" ]; then
    echo "setup: no nvcc found; CUDA calibration probes not compiled"
    return 0
  fi
  cmake -S . -B build/cuda-probes -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYNCSIM_BUILD_TESTS=OFF \
    -DSYNCSIM_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" >/dev/null
  local targets=()
  for t in syncsim-probe syncsim-p2p-probe; do
    cmake --build build/cuda-probes --target help | grep -q "^$t:" && targets+=("$t")
  done
  if ((${#targets[@]} == 0)); then
    echo "setup: nvcc found but no CUDA toolkit libraries (cuBLAS); probes not compiled"
    return 0
  fi
  cmake --build build/cuda-probes -j "$jobs" --target "${targets[@]}"
  echo "setup: CUDA calibration probes compiled: ${targets[*]}"
}

mode=${1:-run}
[ $# -gt 0 ] && shift
if [ "$mode" = ci-tools ]; then
  install_missing "${PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${CI_PACKAGES[@]}"
  exit 0
fi
install_missing "${PACKAGES[@]}"
case "$mode" in
  build)
    build release
    ;;
  run)
    build release
    exec ./build/release/bin/syncsim run "$@"
    ;;
  test)
    install_missing "${TEST_PACKAGES[@]}"
    build ci
    ctest --preset ci -j "$jobs"
    cuda_probes
    ;;
  *)
    echo "usage: ./setup.sh [run [ARGS...] | test | build | ci-tools]" >&2
    exit 2
    ;;
esac
