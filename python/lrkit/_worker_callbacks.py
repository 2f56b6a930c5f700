"""Python callbacks that run on a process group's worker thread (Future.then on a collective's future) and the
interpreter's exit.

torch releases such a callback on the worker thread, under the GIL, after it has marked the chained future done:
the main thread may already be past its last wait and out of the script. If the interpreter is finalizing by then,
the worker's GIL acquisition ends the thread inside torch's C++ code and the process aborts ("terminate called
without an active exception"; seen with torch 1.13 and Gloo under load, about one run in two hundred). Every callback
lrkit hands to a worker is tracked here, and the interpreter's exit waits until the workers have let go of them."""
import atexit
import time
import weakref

_held_by_workers = weakref.WeakSet()


def handed_to_worker(callback):
    """`callback`, tracked until the worker thread that runs it has released it."""
    _held_by_workers.add(callback)
    return callback


def wait_until_released(timeout_s=10.0):
    """Waits (sleeping, so without the GIL) until no tracked callback is alive; False when `timeout_s` ran out first
    (a collective that never finished: its callback is still waiting to run)."""
    deadline = time.monotonic() + timeout_s
    while len(_held_by_workers):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)
    return True


# Exit handlers run before the interpreter starts finalizing, while a worker can still take the GIL.
atexit.register(wait_until_released)
