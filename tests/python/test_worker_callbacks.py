"""The exit waits for the callbacks lrkit hands to a process group's worker thread: a worker that releases one
after the main thread has finished must not meet a finalizing interpreter."""
import subprocess
import sys
import textwrap
import threading
import time

from lrkit import _worker_callbacks


def test_the_wait_lasts_until_the_worker_has_released_the_callback():
    def callback():
        pass

    worker = threading.Thread(target=lambda held: (time.sleep(0.3), held.clear()), args=([callback],))
    _worker_callbacks.handed_to_worker(callback)
    del callback
    started = time.monotonic()
    worker.start()
    assert _worker_callbacks.wait_until_released(timeout_s=10)
    assert time.monotonic() - started >= 0.25
    worker.join()


def test_the_wait_gives_up_on_a_callback_that_is_never_released():
    def never_released():
        pass

    _worker_callbacks.handed_to_worker(never_released)
    assert not _worker_callbacks.wait_until_released(timeout_s=0.05)
    del never_released
    assert _worker_callbacks.wait_until_released(timeout_s=0)


def test_the_interpreter_exit_waits_for_a_worker_still_holding_a_callback(tmp_path):
    # The worker thread is a daemon: without the exit's wait the interpreter would not wait for it and would finalize
    # while it still holds the callback (the file would not be written).
    script = textwrap.dedent("""
        import sys, threading, time
        from lrkit._worker_callbacks import handed_to_worker

        def callback():
            pass

        def worker(held):
            time.sleep(0.3)
            with open(sys.argv[1], "w") as f:
                f.write("released")
            held.clear()

        handed_to_worker(callback)
        threading.Thread(target=worker, args=([callback],), daemon=True).start()
        del callback
    """)
    marker = tmp_path / "released"
    done = subprocess.run([sys.executable, "-c", script, str(marker)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "released"
