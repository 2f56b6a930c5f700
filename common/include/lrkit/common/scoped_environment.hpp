// Environment variables set (or unset: nullopt) for a scope and put back after it. Not thread-safe (setenv):
// for a process's own set-up, such as what the children it starts inherit, and for tests.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace lrkit::common {

using Variables = std::map<std::string, std::optional<std::string>>;

class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const Variables& values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
      set(name, value);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) set(name, value);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  Variables saved_;
};

}  // namespace lrkit::common
