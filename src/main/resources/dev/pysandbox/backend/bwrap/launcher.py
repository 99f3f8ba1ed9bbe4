"""pysandbox launcher: starts and kills sandbox processes for the Java server.

Why it exists: a JVM that starts a process with ProcessBuilder parks one reaper thread per
child for the child's whole life, and the server must hold thousands of idle sandboxes on a
handful of threads. So the server starts this one small helper, and the helper forks every
sandbox, reaps it, and reports its exit. It runs on the host, with the server's privileges,
and never runs user code.

Protocol: JSON lines. The first line on stdin is the set-up:
  {"parent": <server pid>, "uid": <int or null>, "gid": <int or null>,
   "stage": {"source": <dir>, "target": <dir>} or null}
then requests:
  {"op": "spawn", "id": ..., "argv": [...], "socket": <path>, "token": ...,
   "seccomp": <path or null>, "cgroups": [<dir>...], "rlimits": {"NAME": [soft, hard]}}
  {"op": "kill", "id": ...}
Replies and events on stdout:
  {"type": "spawned", "id": ..., "pid": ...}  or  {"type": "spawn_failed", "id": ..., "error": ...}
  {"type": "info", "id": ..., "child_pid": ..., "pidns": <inode or null>}
  {"type": "killed", "id": ..., "found": true|false}
  {"type": "exit", "id": ..., "pid": ..., "code": <exit code or null>, "signal": <int or null>}

The spawned child connects three sockets to the server (control, stdout, stderr, each
introduced by a hello line with the sandbox id and token), places them on fds 3, 1 and 2,
joins its cgroups, applies rlimits, drops to the sandbox user and execs bwrap. When the
server runs as root, the sandbox's directories live under a directory the sandbox user cannot
reach (such as /root/.pysandbox); the launcher then bind-mounts that directory once, in its
own private mount namespace, at a path the sandbox user can reach ("stage").
"""

import ctypes
import fcntl
import json
import os
import resource
import selectors
import signal
import socket
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

libc = ctypes.CDLL(None, use_errno=True)


def emit(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(1, data)
        data = data[n:]


def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def stage(source, target):
    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    os.makedirs(target, mode=0o755, exist_ok=True)
    check(libc.mount(source.encode(), target.encode(), None, MS_BIND, None), "bind %s" % source)


class Launcher:
    def __init__(self, setup):
        self.uid = setup.get("uid")
        self.gid = setup.get("gid")
        self.children = {}  # pid -> sandbox id
        self.pids = {}  # sandbox id -> pid (until reaped)
        self.info = {}  # info pipe fd -> (sandbox id, buffer)
        self.selector = selectors.DefaultSelector()
        self.inbuf = b""

    # -- spawning ----------------------------------------------------------------------------

    def spawn(self, req):
        sid = req["id"]
        info_r, info_w = os.pipe()
        err_r, err_w = os.pipe()
        os.set_inheritable(info_w, True)
        pid = os.fork()
        if pid == 0:
            try:
                os.close(info_r)
                os.close(err_r)
                self._child(req, info_w, err_w)
            except BaseException as e:
                try:
                    os.write(err_w, ("%s" % e).encode()[:4000])
                finally:
                    os._exit(127)
        os.close(info_w)
        os.close(err_w)
        failure = b""
        while True:
            try:
                chunk = os.read(err_r, 4096)
            except InterruptedError:
                continue
            if not chunk:
                break
            failure += chunk
        os.close(err_r)
        if failure:
            os.close(info_r)
            self._reap_now(pid)
            emit({"type": "spawn_failed", "id": sid, "error": failure.decode("utf-8", "replace")})
            return
        self.children[pid] = sid
        self.pids[sid] = pid
        os.set_blocking(info_r, False)
        self.info[info_r] = (sid, b"", pid)
        self.selector.register(info_r, selectors.EVENT_READ, "info")
        emit({"type": "spawned", "id": sid, "pid": pid})

    def _child(self, req, info_w, err_w):
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        socks = {}
        for channel in ("ctl", "out", "err"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(req["socket"])
            hello = json.dumps({"sandbox": req["id"], "token": req["token"], "channel": channel}) + "\n"
            s.sendall(hello.encode())
            socks[channel] = s
        null = os.open(os.devnull, os.O_RDWR)
        sources = {
            0: null,
            1: socks["out"].fileno(),
            2: socks["err"].fileno(),
            3: socks["ctl"].fileno(),
            4: info_w,
        }
        if req.get("seccomp"):
            sources[5] = os.open(req["seccomp"], os.O_RDONLY)
        # Lift every source above the targets first, so that no dup2 clobbers another source.
        lifted = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for target, fd in sources.items()}
        err_lifted = fcntl.fcntl(err_w, fcntl.F_DUPFD_CLOEXEC, 100)
        for target, fd in lifted.items():
            os.dup2(fd, target, inheritable=True)
        os.dup2(err_lifted, 6, inheritable=False)
        err_w = 6
        os.closerange(7, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        for directory in req.get("cgroups") or []:
            with open(os.path.join(directory, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        for name, (soft, hard) in (req.get("rlimits") or {}).items():
            which = getattr(resource, "RLIMIT_" + name.upper())
            if os.getuid() != 0:
                # Without privilege a hard limit can only be lowered: never ask for more.
                _, current = resource.getrlimit(which)
                if current != resource.RLIM_INFINITY:
                    hard = min(hard, current)
                    soft = min(soft, hard)
            resource.setrlimit(which, (soft, hard))
        if self.uid is not None and os.getuid() == 0:
            os.setgroups([])
            os.setgid(self.gid)
            os.setuid(self.uid)
        argv = req["argv"]
        os.execv(argv[0], argv)

    def _reap_now(self, pid):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    def read_info(self, fd):
        """bwrap's --info-fd JSON: the host pid of the sandbox's PID 1. The sandbox inherits the
        pipe, so EOF may never come while it runs: parse as soon as the object is complete."""
        sid, buf, pid = self.info[fd]
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        buf += chunk
        info = None
        try:
            info = json.loads(buf.decode()) if buf.strip() else None
        except ValueError:
            if chunk and len(buf) < 65536:
                self.info[fd] = (sid, buf, pid)
                return
        self.selector.unregister(fd)
        os.close(fd)
        del self.info[fd]
        child_pid = info.get("child-pid") if isinstance(info, dict) else None
        pidns = None
        if child_pid:
            try:
                pidns = os.stat("/proc/%d/ns/pid" % child_pid).st_ino
            except OSError:
                pidns = None
        emit({"type": "info", "id": sid, "pid": pid, "child_pid": child_pid, "pidns": pidns})

    # -- killing and reaping -------------------------------------------------------------------

    def kill(self, req):
        sid = req["id"]
        pid = self.pids.get(sid)
        if pid is not None:
            for fn in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    fn()
                except ProcessLookupError:
                    pass
        emit({"type": "killed", "id": sid, "found": pid is not None})

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            sid = self.children.pop(pid, None)
            if sid is None:
                continue
            self.pids.pop(sid, None)
            code = os.waitstatus_to_exitcode(status)
            emit({
                "type": "exit",
                "id": sid,
                "pid": pid,
                "code": code if code >= 0 else None,
                "signal": -code if code < 0 else None,
            })

    def kill_all(self):
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass

    # -- loop ------------------------------------------------------------------------------------

    def handle(self, line):
        try:
            req = json.loads(line)
        except ValueError:
            emit({"type": "error", "error": "not JSON: %r" % line[:200]})
            return
        op = req.get("op")
        try:
            if op == "spawn":
                self.spawn(req)
            elif op == "kill":
                self.kill(req)
            else:
                emit({"type": "error", "error": "unknown op %r" % op})
        except Exception as e:
            emit({"type": "spawn_failed" if op == "spawn" else "error", "id": req.get("id"), "error": str(e)})

    def loop(self):
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, "stdin")
        self.selector.register(wake_r, selectors.EVENT_READ, "wake")
        self.handle_lines()
        while True:
            for key, _ in self.selector.select():
                if key.data == "wake":
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    self.reap()
                elif key.data == "info":
                    self.read_info(key.fd)
                else:
                    try:
                        chunk = os.read(0, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        self.kill_all()
                        return
                    self.inbuf += chunk
                    self.handle_lines()
            self.reap()

    def handle_lines(self):
        while b"\n" in self.inbuf:
            line, self.inbuf = self.inbuf.split(b"\n", 1)
            if line.strip():
                self.handle(line)


def read_setup():
    """The first line, read without buffering so that nothing after it is swallowed."""
    buf = b""
    while b"\n" not in buf:
        chunk = os.read(0, 4096)
        if not chunk:
            sys.exit("pysandbox launcher: no set-up line")
        buf += chunk
    line, rest = buf.split(b"\n", 1)
    return json.loads(line), rest


def main():
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Orphans of a killed sandbox (its PID 1, once bwrap's monitor is gone) become our children,
    # so that we reap them at once instead of leaving zombies to the host's init.
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    setup, rest = read_setup()
    if os.getppid() != setup.get("parent"):
        sys.exit("pysandbox launcher: the server is gone")
    if setup.get("stage"):
        stage(setup["stage"]["source"], setup["stage"]["target"])
    launcher = Launcher(setup)
    launcher.inbuf = rest
    emit({"type": "hello", "pid": os.getpid()})
    launcher.loop()


if __name__ == "__main__":
    main()
