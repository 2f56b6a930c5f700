// A run log as a SIGKILLed writer leaves it: a child creates the log, appends
// rows through `write`, flushes and exits without closing the file, so the
// file keeps the SWMR writer's mark and whatever was flushed, however uneven.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "lrkit/h5/series_log.hpp"

namespace lrkit::testing {

inline void write_as_killed(const std::string& path, const std::vector<h5::SeriesLog::Column>& columns,
                            const std::function<void(h5::SeriesLog&)>& write) {
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    try {
      h5::SeriesLog log(path, columns);
      write(log);
      log.flush();
      std::_Exit(0);  // inside the log's scope: nothing closes the file
    } catch (...) {
      std::_Exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace lrkit::testing
