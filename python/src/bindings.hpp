// The pieces of the lrkit._lrkit extension module, one function per concept.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace lrkit::python {

void bind_schedules(pybind11::module_& m);
void bind_controllers(pybind11::module_& m);
void bind_reweighting(pybind11::module_& m);
void bind_spikes(pybind11::module_& m);
void bind_diagnose(pybind11::module_& m);
void bind_run_logs(pybind11::module_& m);

// Text that may hold file names, between Python and C++ (file_system_text.cpp). A file name whose bytes are not UTF-8
// (Latin-1, say) is a str with surrogates in Python (os.fsdecode, os.listdir, sys.argv), which pybind11's own
// conversion refuses ("Unable to cast Python instance"). These convert as the file system does (UTF-8 with
// surrogateescape), so such a name reaches the file and comes back as the str open() takes.
std::string text_from_python(const pybind11::handle& text);  // of a str: callers check the type
pybind11::str text_to_python(const std::string& text);
// Raises Python's `type` with `message` as text_to_python gives it (throws pybind11::error_already_set).
[[noreturn]] void raise_with_text(PyObject* type, const std::string& message);
// Registers the translation of a C++ exception whose message is not UTF-8 (it names such a file); call before the
// bindings register their own translators, which pybind11 then tries first.
void translate_errors_naming_files();

}  // namespace lrkit::python
