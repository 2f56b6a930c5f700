// A full disk for a test, as a file size limit makes one: `body` runs in a forked child whose writes past `bytes`
// fail with EFBIG (SIGXFSZ ignored), as writes fail on a full disk. What `body` returns and what the child printed
// on stderr come back; the limit never touches the test process.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "test_files.hpp"

namespace lrkit::testing {

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct LimitedRun {
  bool exited = false;   // the child ran `body` to its end
  std::string returned;  // what `body` returned ("uncaught: ..." for an exception it let through)
  std::string printed;   // the child's stderr
};

inline LimitedRun under_file_size_limit(rlim_t bytes, const std::function<std::string()>& body) {
  static int runs = 0;
  const std::string stem = (scratch_dir() / ("file_size_limit_" + std::to_string(++runs))).string();
  const std::string returned_path = stem + ".returned", printed_path = stem + ".stderr";
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0) return {};
  if (child == 0) {
    std::freopen(printed_path.c_str(), "w", stderr);
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{bytes, bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string returned;
    try {
      returned = body();
    } catch (const std::exception& e) {
      returned = std::string("uncaught: ") + e.what();
    }
    std::ofstream(returned_path) << returned;
    std::fflush(stderr);
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  LimitedRun run;
  run.exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!run.exited) return run;
  run.returned = file_text(returned_path);
  run.printed = file_text(printed_path);
  return run;
}

}  // namespace lrkit::testing
