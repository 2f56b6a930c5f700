// Text that may hold file names, between Python and C++ (bindings.hpp).
#include <Python.h>

#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "bindings.hpp"

namespace py = pybind11;

namespace lrkit::python {

std::string text_from_python(const py::handle& text) {
  const auto bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogateescape"));
  if (!bytes) throw py::error_already_set();  // a surrogate no file name holds: Python's UnicodeEncodeError
  return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

py::str text_to_python(const std::string& text) {
  auto str = py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape"));
  if (!str) throw py::error_already_set();
  return str;
}

void raise_with_text(PyObject* type, const std::string& message) {
  PyErr_SetObject(type, text_to_python(message).ptr());
  throw py::error_already_set();
}

namespace {

bool is_utf8(const char* text) {
  const auto decoded =
      py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(std::strlen(text)), nullptr));
  if (decoded) return true;
  PyErr_Clear();
  return false;
}

}  // namespace

void translate_errors_naming_files() {
  // pybind11 gives a C++ exception's message to Python as UTF-8: one that named a file whose name is not (a table
  // named "caf\xe9.csv" in Latin-1) became an empty ValueError. Such a message goes as the file system's text, in the
  // type pybind11 gives the exception; every other message is left to pybind11.
  py::register_exception_translator([](std::exception_ptr p) {
    const auto raised = [](PyObject* type, const char* message) {
      if (is_utf8(message)) return false;
      PyErr_SetObject(type, text_to_python(message).ptr());
      return true;
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::builtin_exception&) {
      throw;  // the bindings' own: raise_with_text where a message may name a file
    } catch (const std::out_of_range& e) {
      if (!raised(PyExc_IndexError, e.what())) throw;
    } catch (const std::logic_error& e) {  // invalid_argument, domain_error, length_error
      if (!raised(PyExc_ValueError, e.what())) throw;
    } catch (const std::range_error& e) {
      if (!raised(PyExc_ValueError, e.what())) throw;
    } catch (const std::overflow_error& e) {
      if (!raised(PyExc_OverflowError, e.what())) throw;
    } catch (const std::exception& e) {
      if (!raised(PyExc_RuntimeError, e.what())) throw;
    }
  });
}

}  // namespace lrkit::python
