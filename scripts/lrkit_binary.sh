# Sourced by the scripts, benches and notebooks' runner: sets LRKIT to the
# built `lrkit` executable. CMake decides where executables land (the top
# CMakeLists.txt: <build>/bin); $LRKIT, when set, names another build's.
LRKIT=${LRKIT:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/bin/lrkit"}
if [ ! -x "$LRKIT" ]; then
  echo "lrkit executable not found at $LRKIT: build first (bash scripts/build.sh) or set LRKIT" >&2
  exit 2
fi
export LRKIT
