// LibTorch's errors as a user reads them: c10::Error::what() carries a C++ backtrace (dozens of "frame #N" lines)
// that tells a user nothing; the message before it is one line here.
#pragma once

#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace lrkit::cli {

inline std::string libtorch_message(const c10::Error& e) {
  std::string message = e.what_without_backtrace();
  for (char& c : message)
    if (c == '\n') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

// What a failure says to the user: LibTorch's as "LibTorch: <its message>", any other's what().
inline std::string error_text(const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  return torch_error ? "LibTorch: " + libtorch_message(*torch_error) : e.what();
}

}  // namespace lrkit::cli
