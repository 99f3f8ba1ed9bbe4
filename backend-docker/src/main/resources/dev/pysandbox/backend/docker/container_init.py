"""PID 1 of a pysandbox container:

    container_init.py '{"socket": ..., "sandbox": ..., "token": ...}' PROGRAM [ARGS...]

First it connects to the server's door (the socket named in its first argument) as the sandbox's
"life" channel, on which nothing is ever said: when that connection ends (the server died, or is
done with the sandbox) every process in the container is killed and this process ends, which ends
the container, as bwrap's --die-with-parent does for its sandboxes. Then it starts the runner (the
rest of its command line) and reaps every process that ends in the container (detached children are
re-parented here). Once the runner itself has ended, it kills every other process, says how the
runner ended on its standard output (the container's log):

    pysandbox-runner-exit {"code": 3}        or        {"signal": 9}

and stays, holding nothing but the container's cgroup (and with it what the kernel counted: peak
memory, OOM kills, pids-limit hits) until the server, having read those counts, removes it, or its
connection ends, or LINGER_SECONDS pass.

Signals sent from inside the container cannot end it (PID 1 ignores what it has no handler for);
the engine's SIGKILL from outside does, and takes every process in the PID namespace with it."""
import json
import os
import signal
import socket
import sys
import threading
import time

LINGER_SECONDS = 10

_gone = threading.Event()


def _kill_others():
    try:
        os.kill(-1, signal.SIGKILL)  # every process of the namespace but this one
    except OSError:
        pass


def _watch(conn):
    """Blocks until the server's end of the life channel closes, then kills everything else."""
    try:
        while conn.recv(4096):
            pass
    except OSError:
        pass
    _gone.set()
    _kill_others()


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: container_init.py LIFE_JSON PROGRAM [ARGS...]\n")
        return 2
    way = json.loads(sys.argv[1])
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(way["socket"])
    hello = {"sandbox": way["sandbox"], "token": way["token"], "channel": "life"}
    conn.sendall((json.dumps(hello) + "\n").encode())
    conn.set_inheritable(False)
    threading.Thread(target=_watch, args=(conn,), daemon=True).start()
    runner = os.fork()
    if runner == 0:
        try:
            os.execv(sys.argv[2], sys.argv[2:])
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
    _kill_others()
    if status is not None:
        if os.WIFSIGNALED(status):
            line = '{"signal": %d}' % os.WTERMSIG(status)
        else:
            line = '{"code": %d}' % os.waitstatus_to_exitcode(status)
        os.write(1, ("pysandbox-runner-exit " + line + "\n").encode())
    deadline = time.monotonic() + LINGER_SECONDS
    while not _gone.is_set() and time.monotonic() < deadline:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        _gone.wait(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
