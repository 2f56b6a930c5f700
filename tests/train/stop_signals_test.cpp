// StopSignals: the first stop signal is recorded, not acted on; its second
// delivery within the window is the same request; a later one ends the process.
#include "lrkit/train/stop_signals.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace lrkit::train {
namespace {

// Runs `body` in a child process; returns its wait status and what it wrote to the pipe (its milestones).
template <typename Body>
std::pair<int, std::string> in_child(Body body) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, ""};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string said;
  char c;
  while (::read(fds[0], &c, 1) == 1) said += c;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {status, said};
}

void say(int fd, char c) { [[maybe_unused]] const auto n = ::write(fd, &c, 1); }

TEST(StopSignals, TheFirstSignalIsRecordedItsRepeatIgnoredALaterOneEndsTheProcess) {
  const auto [status, said] = in_child([](int fd) {
    const StopSignals signals(std::chrono::milliseconds(300));
    if (StopSignals::requested() == 0) say(fd, 'a');
    ::raise(SIGTERM);
    if (StopSignals::requested() == SIGTERM) say(fd, 'b');
    ::raise(SIGINT);  // within the window: the same request
    if (StopSignals::requested() == SIGTERM) say(fd, 'c');
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::raise(SIGHUP);  // after it: at once, SIGHUP's default action
    say(fd, 'x');
  });
  EXPECT_EQ(said, "abc");
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGHUP);
}

TEST(StopSignals, DestroyedBeforeAnyRequestItRestoresTheHandlersItReplaced) {
  const auto [status, said] = in_child([](int fd) {
    ::signal(SIGHUP, SIG_IGN);
    { const StopSignals signals; }
    struct sigaction now {};
    ::sigaction(SIGHUP, nullptr, &now);
    if (now.sa_handler == SIG_IGN) say(fd, 'r');
    ::raise(SIGTERM);  // the default action again
    say(fd, 'x');
  });
  EXPECT_EQ(said, "r");
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(StopSignals, AfterARequestItsHandlersStaySoTheRepeatCannotEndTheProcessOnItsWayOut) {
  const auto [status, said] = in_child([](int fd) {
    { const StopSignals signals(std::chrono::seconds(5)); ::raise(SIGTERM); }
    ::raise(SIGTERM);  // a launcher's forward of the same request, after the training loop ended
    say(fd, 'o');
  });
  EXPECT_EQ(said, "o");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace lrkit::train
