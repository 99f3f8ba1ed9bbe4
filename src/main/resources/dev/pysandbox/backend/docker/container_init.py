"""PID 1 of a pysandbox container: starts the runner (the rest of its command line), reaps every
process that ends in the container (detached children are re-parented here), and, once the runner
itself has ended, says how on its standard output (the container's log):

    pysandbox-runner-exit {"code": 3}        or        {"signal": 9}

and then stays, still reaping, for a while: the container's cgroup (and with it what the kernel
counted: peak memory, OOM kills, pids-limit hits) lives as long as this process, so the server
can read those counts before it removes the container. If the server does not come within
LINGER_SECONDS (it died, say), this process exits and the container ends on its own.

Signals sent from inside the container cannot end it (PID 1 ignores what it has no handler
for); the engine's SIGKILL from outside does, and takes every process in the PID namespace with
it."""
import os
import sys
import time

LINGER_SECONDS = 30


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: container_init.py PROGRAM [ARGS...]\n")
        return 2
    runner = os.fork()
    if runner == 0:
        try:
            os.execv(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    status = None
    while status is None:
        try:
            pid, raw = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == runner:
            status = raw
    if status is not None:
        if os.WIFSIGNALED(status):
            line = '{"signal": %d}' % os.WTERMSIG(status)
        else:
            line = '{"code": %d}' % os.waitstatus_to_exitcode(status)
        os.write(1, ("pysandbox-runner-exit " + line + "\n").encode())
    deadline = time.monotonic() + LINGER_SECONDS
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pid = 0
        if pid == 0:
            time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
