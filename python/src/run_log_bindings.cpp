// What lrkit.read_log asks of a run log before HDF5 opens it: whether a refused write left it short of the end HDF5
// had allocated. HDF5 1.10 refuses such a file as truncated; HDF5 1.14 (h5py's wheels) opens it for a SWMR reader
// and reads what is there, so the check is lrkit's own, the one `lrkit log check` makes.
#include "bindings.hpp"
#include "lrkit/h5/file.hpp"

namespace py = pybind11;

namespace lrkit::python {

void bind_run_logs(py::module_& m) {
  m.def(
      "_bytes_short_of_allocated_end",
      [](const py::str& path) { return h5::bytes_short_of_allocated_end(text_from_python(path)); },
      py::arg("path"),
      "how many bytes a run log ends before the end its superblock records as allocated (0: none)");
}

}  // namespace lrkit::python
