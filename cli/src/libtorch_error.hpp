// LibTorch's errors as a user reads them: c10::Error::what() carries a C++ backtrace (dozens of "frame #N" lines)
// that tells a user nothing; the message before it is one line here.
#pragma once

#include <c10/util/Exception.h>

#include <string>

namespace lrkit::cli {

inline std::string libtorch_message(const c10::Error& e) {
  std::string message = e.what_without_backtrace();
  for (char& c : message)
    if (c == '\n') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

}  // namespace lrkit::cli
