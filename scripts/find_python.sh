# Sourced by scripts and benches: python_with MODULE... prints the first python3
# (each on the PATH, then $PYTHON, then the system's) that imports every MODULE,
# or says which modules none has and exits 2. On Debian the python3 first on the
# PATH may lack Debian's packages (/usr/bin/python3 has them); on a GPU machine
# it is often the other way round, so no interpreter is hard-coded.
python_with() {
  local candidate imports
  imports=$(IFS=,; echo "$*")
  for candidate in $(type -ap python3) ${PYTHON:-} /usr/bin/python3; do
    if "$candidate" -c "import $imports" 2>/dev/null; then echo "$candidate"; return 0; fi
  done
  echo "no python3 imports $imports (Debian: apt-get install $(printf 'python3-%s ' "$@"))" >&2
  exit 2
}

# python_of_the_build prints the Python that build/'s lrkit package (build/python) was built for, or says there is
# none and exits 2.
python_of_the_build() {
  local python
  python=$(grep -m1 '^Python3_EXECUTABLE:' build/CMakeCache.txt 2>/dev/null | cut -d= -f2)
  if [ ! -x "$python" ] || [ ! -d build/python/lrkit ]; then
    echo "no Python package in build/ (configure with pybind11 and a Python with torch)" >&2
    exit 2
  fi
  echo "$python"
}
