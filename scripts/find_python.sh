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
