"""pysandbox launcher: starts and kills sandbox processes for the Java server.

Why it exists: a JVM that starts a process with ProcessBuilder parks one reaper thread per
child for the child's whole life, and the server must hold thousands of idle sandboxes on a
handful of threads. So the server starts this one small helper, and the helper forks every
sandbox, reaps it, and reports its exit. It runs on the host, with the server's privileges,
and never runs user code.

Protocol: JSON lines. The first line on stdin is the set-up:
  {"parent": <server pid>, "uid": <int or null>, "gid": <int or null>,
   "stage": {"source": <dir>, "target": <dir>} or null, "instance": <server instance id>}
then requests:
  {"op": "spawn", "id": ..., "argv": [...], "socket": <path>, "token": ...,
   "seccomp": <path or null>, "cgroups": [<dir>...], "rlimits": {"NAME": [soft, hard]},
   "uid": <int, optional>, "gid": <int, optional>, "image": <image or absent>}
  {"op": "kill", "id": ...}
  {"op": "release", "ref": <int>, "id": ..., "host": <dir>, "stage": <dir or null>,
   "path": <image file>}
  {"op": "probe", "ref": <int>, "image": <image>}
where an image is {"path": <file>, "template": <file>, "bytes": n, "inodes": n, "mkfs": <path>,
"debugfs": <path>, "host": <dir>, "stage": <dir or null>}.
Replies and events on stdout:
  {"type": "spawned", "id": ..., "pid": ...}  or  {"type": "spawn_failed", "id": ..., "error": ...}
  {"type": "info", "id": ..., "child_pid": ..., "pidns": <inode or null>}
  {"type": "killed", "id": ..., "found": true|false}
  {"type": "exit", "id": ..., "pid": ..., "code": <exit code or null>, "signal": <int or null>}
  {"type": "done", "ref": ..., "error": <text or null>}   (release, probe)

Workspace images: a sandbox with an image gets a file system of its own, so that its disk quota
holds at all times (blocks and inodes), not only while the server watches a run. The image is a
sparse copy of a template made once per size with mkfs.ext4 (no journal, no reserved blocks, a
fixed number of inodes; lost+found removed), attached to a loop device that frees itself when
the last mount goes, and mounted nodev,nosuid twice: in the server's mount namespace at the
workspace's host path (the server reads and writes the files there) and, in ours, at the staged
path bwrap binds as /mnt/data. "release" unmounts both and deletes the image; closing stdin
releases every image this launcher mounted. Copying, attaching and first mounting an image is
the slow part (a few milliseconds, far more on a loaded host); so whenever it has nothing else
to do, the launcher makes the next one ahead ("spare-<instance>-<n>.img", mounted in its own
namespace only) for the quota it was last asked for, and a spawn that finds it only renames it
and mounts the same device twice more, which costs next to nothing.

The spawned child connects three sockets to the server (control, stdout, stderr, each
introduced by a hello line with the sandbox id and token), places them on fds 3, 1 and 2,
joins its cgroups, applies rlimits, drops to the sandbox user and execs bwrap. When the
server runs as root, the sandbox's directories live under a directory the sandbox user cannot
reach (such as /root/.pysandbox); the launcher then bind-mounts that directory once, in its
own private mount namespace, at a path the sandbox user can reach ("stage").
"""

import ctypes
import errno
import fcntl
import json
import os
import re
import resource
import selectors
import signal
import socket
import struct
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_NOSUID = 2
MS_NODEV = 4
MNT_DETACH = 2
UMOUNT_NOFOLLOW = 8
LOOP_SET_FD = 0x4C00
LOOP_SET_STATUS64 = 0x4C04
LOOP_CONFIGURE = 0x4C0A
LOOP_CTL_GET_FREE = 0x4C82
LO_FLAGS_AUTOCLEAR = 4

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]


def emit(obj):
    """One line to the server; once the server is gone there is no one to tell, and the clean-up
    that follows must not stop at the first line it cannot write."""
    data = (json.dumps(obj) + "\n").encode()
    try:
        while data:
            n = os.write(1, data)
            data = data[n:]
    except BrokenPipeError:
        pass


def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def stage(source, target):
    """Our own mount namespace, private from the start (nothing mounted on the host from now on
    reaches it, nothing we mount reaches the host), rid of the workspaces it was born with, and
    the data directory's sandbox/ bound where bwrap can reach it."""
    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    drop_copied_workspaces()
    os.makedirs(target, mode=0o755, exist_ok=True)
    check(libc.mount(source.encode(), target.encode(), None, MS_BIND, None), "bind %s" % source)


WORKSPACE_IMAGE = re.compile(r"/images/(sbx|spare|probe)-[^/]+\.img( \(deleted\))?$")


def drop_copied_workspaces():
    """A new mount namespace starts as a copy of the server's, with every workspace image that
    servers on this host (other data directories, or this one's launcher that died) had mounted
    there at that moment. A private copy never sees their unmount: it would keep each image's loop
    device attached until we exit. None of them is ours to use (what a sandbox binds we mount
    afterwards), so they go at once, found by what backs them, whatever their mount point."""
    with open("/proc/self/mountinfo", "rb") as f:
        table = f.read().decode("utf-8", "surrogateescape").splitlines()
    for line in table:
        fields = line.split(" ")
        try:
            fstype = fields[fields.index("-", 6) + 1]
        except (ValueError, IndexError):
            continue
        if fstype != "ext4":
            continue
        try:
            with open("/sys/dev/block/%s/loop/backing_file" % fields[2]) as f:
                backing = f.read().rstrip("\n")
        except OSError:  # not a loop device
            continue
        if WORKSPACE_IMAGE.search(backing):
            try:
                unmount(unescape(fields[4]))
            except OSError as e:
                emit({"type": "error", "error": "dropping a copied workspace mount: %s" % e})


def unescape(field):
    """mountinfo writes space, tab, newline and backslash as a backslash and three octal digits."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


# -- workspace images ---------------------------------------------------------------------------


TEMPLATES_KEPT = 8


def ensure_template(image):
    """A fresh file system of this size and inode count, made once and copied for each sandbox
    (mkfs costs tens of milliseconds, a sparse copy well under one). Written under a temporary
    name and renamed, so that servers sharing the data directory never use half a template. At
    most TEMPLATES_KEPT are kept (the least recently used go), so that sessions asking for many
    different quotas cannot fill the disk with them."""
    template = image["template"]
    try:
        os.utime(template)  # used now
        return
    except FileNotFoundError:
        pass
    import subprocess

    tmp = "%s.tmp-%d" % (template, os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.ftruncate(fd, image["bytes"])
        finally:
            os.close(fd)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
        for argv in (
            [image["mkfs"], "-q", "-F", "-b", "4096", "-I", "256", "-N", str(image["inodes"]),
             "-m", "0", "-O", "^has_journal,^resize_inode", "-E", "lazy_itable_init=1,nodiscard",
             "-L", "pysandbox", tmp],
            [image["debugfs"], "-w", "-R", "rmdir lost+found", tmp],
        ):
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=env, timeout=120)
            if done.returncode != 0:
                raise OSError("%s failed (exit %d): %s" % (
                    os.path.basename(argv[0]), done.returncode,
                    done.stdout.decode("utf-8", "replace").strip()[:500]))
        os.rename(tmp, template)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    forget_old_templates(os.path.dirname(template))


def forget_old_templates(directory):
    templates = []
    for name in os.listdir(directory):
        if name.startswith("template-") and name.endswith(".img"):
            try:
                templates.append((os.stat(os.path.join(directory, name)).st_mtime, name))
            except FileNotFoundError:
                pass
    templates.sort()
    for _, name in templates[:-TEMPLATES_KEPT]:
        try:
            os.unlink(os.path.join(directory, name))
        except FileNotFoundError:
            pass


def sparse_copy(source, target):
    """Copies only the extents that hold data; the holes stay holes."""
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        dst = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            size = os.fstat(src).st_size
            os.ftruncate(dst, size)
            offset = 0
            while offset < size:
                try:
                    data = os.lseek(src, offset, os.SEEK_DATA)
                except OSError as e:
                    if e.errno == errno.ENXIO:
                        break
                    raise
                hole = os.lseek(src, data, os.SEEK_HOLE)
                copy_range(src, dst, data, hole - data)
                offset = hole
        finally:
            os.close(dst)
    except BaseException:
        try:
            os.unlink(target)
        except FileNotFoundError:
            pass
        raise
    finally:
        os.close(src)


def copy_range(src, dst, offset, length):
    while length > 0:
        try:
            n = os.copy_file_range(src, dst, length, offset, offset)
        except OSError as e:
            if e.errno not in (errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            n = os.pwrite(dst, os.pread(src, min(length, 1 << 20), offset), offset)
        if n <= 0:
            raise OSError(errno.EIO, "short copy at %d" % offset)
        offset += n
        length -= n


def loop_node(n):
    """The device node of loop device n, made if the host's /dev has not got it yet."""
    path = "/dev/loop%d" % n
    if not os.path.exists(path):
        try:
            with open("/sys/devices/virtual/block/loop%d/dev" % n) as f:
                major, minor = (int(x) for x in f.read().strip().split(":"))
            os.mknod(path, 0o600 | 0o060000, os.makedev(major, minor))
        except FileExistsError:
            pass
        except OSError:
            time.sleep(0.005)
    return path


def attach(image_path):
    """A loop device for the image (autoclear: it detaches itself when its last user goes).
    Returns an open fd of the device, to close once it is mounted."""
    backing = os.open(image_path, os.O_RDWR | os.O_CLOEXEC)
    control = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
    try:
        for _ in range(64):
            n = fcntl.ioctl(control, LOOP_CTL_GET_FREE)
            try:
                dev = os.open(loop_node(n), os.O_RDWR | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            # struct loop_info64, then loop_config {fd, block_size, info, reserved[8]}
            info = struct.pack("=QQQQQIIII64s64s32sQQ", 0, 0, 0, 0, 0, 0, 0, 0,
                               LO_FLAGS_AUTOCLEAR, b"", b"", b"", 0, 0)
            try:
                try:
                    fcntl.ioctl(dev, LOOP_CONFIGURE, struct.pack("=II", backing, 0) + info
                                + bytes(64))
                except OSError as e:
                    if e.errno not in (errno.EINVAL, errno.ENOTTY):
                        raise
                    fcntl.ioctl(dev, LOOP_SET_FD, backing)  # kernels before 5.8
                    fcntl.ioctl(dev, LOOP_SET_STATUS64, info)
                return dev, "/dev/loop%d" % n
            except OSError as e:
                os.close(dev)
                if e.errno != errno.EBUSY:  # taken by someone else since GET_FREE: try again
                    raise
        raise OSError(errno.EBUSY, "no free loop device after 64 attempts")
    finally:
        os.close(control)
        os.close(backing)


def mount_device(device, target):
    check(libc.mount(device.encode(), target.encode(), b"ext4", MS_NOSUID | MS_NODEV,
                     b"noinit_itable"), "mount %s on %s" % (device, target))


def unmount(target):
    """Detaches whatever is mounted at target (nothing there is fine)."""
    for _ in range(8):
        if libc.umount2(target.encode(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0:
            err = ctypes.get_errno()
            if err in (errno.EINVAL, errno.ENOENT):
                return
            raise OSError(err, "umount %s: %s" % (target, os.strerror(err)))


class Launcher:
    def __init__(self, setup, host_ns=None, own_ns=None):
        self.uid = setup.get("uid")
        self.gid = setup.get("gid")
        self.parent = setup.get("parent")  # the server's pid
        self.host_ns = host_ns  # fd of the server's mount namespace, when we have our own
        self.own_ns = own_ns
        self.images = {}  # sandbox id -> its image request, until released
        self.instance = setup.get("instance") or "x"
        self.spare = None  # the next image, made ahead: {"template", "path", "device", "mount"}
        self.spare_for = None  # the image request the next spare is made like
        self.spares_made = 0
        self.children = {}  # pid -> sandbox id
        self.pids = {}  # sandbox id -> pid (until reaped)
        self.info = {}  # info pipe fd -> (sandbox id, buffer)
        self.selector = selectors.DefaultSelector()
        self.inbuf = b""

    # -- spawning ----------------------------------------------------------------------------

    def spawn(self, req):
        sid = req["id"]
        if os.getuid() == 0 and not req.get("uid", self.uid):
            raise OSError(errno.EPERM, "refusing to run sandbox %s as root: no user given" % sid)
        image = req.get("image")
        if image:
            self.mount_image(image, req.get("uid", self.uid), req.get("gid", self.gid))
            self.images[sid] = image
        try:
            self._spawn(req)
        except BaseException:
            self.drop_image(sid)
            raise

    def _spawn(self, req):
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
            self.drop_image(sid)
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
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
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
        uid, gid = req.get("uid", self.uid), req.get("gid", self.gid)
        if uid is not None and os.getuid() == 0:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        argv = req["argv"]
        os.execv(argv[0], argv)

    # -- workspace images ------------------------------------------------------------------------

    def in_host_ns(self, action):
        if self.host_ns is None:
            return action()
        check(libc.setns(self.host_ns, CLONE_NEWNS), "setns(server's mount namespace)")
        try:
            return action()
        finally:
            check(libc.setns(self.own_ns, CLONE_NEWNS), "setns(own mount namespace)")

    def mount_image(self, image, uid, gid):
        """Copies the template, attaches it and mounts it where the server and bwrap look (or
        takes the spare made ahead, when it is like this one)."""
        spare = self.take_spare(image)
        if spare is None:
            try:
                ensure_template(image)
                sparse_copy(image["template"], image["path"])
            except FileNotFoundError:  # another server dropped the template: make it again
                ensure_template(image)
                sparse_copy(image["template"], image["path"])
        try:
            if spare is None:
                fd, device = attach(image["path"])
            else:
                fd, device = None, spare["device"]
            try:
                def on_host():
                    mount_device(device, image["host"])
                    if uid is not None:
                        os.chown(image["host"], uid, gid)
                    os.chmod(image["host"], 0o700)

                self.in_host_ns(on_host)
                if image.get("stage"):
                    mount_device(device, image["stage"])
            finally:
                if fd is not None:
                    os.close(fd)
                if spare is not None:
                    self.drop_spare_mount(spare)
        except BaseException:
            self.release(image)
            raise
        self.spare_for = image

    # The spare: made while idle, in our namespace only, so that it dies with us.

    def take_spare(self, image):
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        if spare["template"] != image["template"]:  # another quota: keep it for the next one
            self.spare = spare
            return None
        try:
            os.rename(spare["path"], image["path"])
        except OSError:
            self.discard_spare(spare)
            return None
        return spare

    def make_spare(self):
        like, self.spare_for = self.spare_for, None
        if like is None or self.spare is not None:
            return
        self.spares_made += 1
        name = "spare-%s-%d" % (self.instance, self.spares_made)
        directory = os.path.dirname(like["path"])
        spare = {"template": like["template"], "path": os.path.join(directory, name + ".img"),
                 "mount": os.path.join(directory, name + ".mnt"), "device": None}
        try:
            ensure_template(like)
            sparse_copy(like["template"], spare["path"])
            os.mkdir(spare["mount"], 0o700)
            fd, spare["device"] = attach(spare["path"])
            try:
                mount_device(spare["device"], spare["mount"])
            finally:
                os.close(fd)
            self.spare = spare
        except Exception as e:
            self.discard_spare(spare)
            emit({"type": "error", "error": "making a spare workspace image: %s" % e})

    def drop_spare_mount(self, spare):
        unmount(spare["mount"])
        try:
            os.rmdir(spare["mount"])
        except OSError:
            pass

    def discard_spare(self, spare):
        try:
            self.drop_spare_mount(spare)
            os.unlink(spare["path"])
        except OSError:
            pass

    def release(self, image):
        """Unmounts an image in both namespaces and deletes it; what is already gone is fine."""
        if image.get("stage"):
            unmount(image["stage"])
        self.in_host_ns(lambda: unmount(image["host"]))
        try:
            os.unlink(image["path"])
        except FileNotFoundError:
            pass

    def drop_image(self, sid):
        image = self.images.pop(sid, None)
        if image:
            try:
                self.release(image)
            except OSError as e:
                emit({"type": "error", "error": "releasing the image of %s: %s" % (sid, e)})

    def release_all(self):
        """At the end: what the server's namespace sees goes first and all at once (one setns,
        lazy unmounts, a few microseconds each), so that a server that must be gone within a
        second never leaves a mount point behind on the host; deleting the images comes after
        (what is not deleted when the server stops waiting, the next server on this data
        directory deletes)."""
        images = [self.images.pop(sid) for sid in list(self.images)]

        def unmount_hosts():
            for image in images:
                try:
                    unmount(image["host"])
                except OSError as e:
                    emit({"type": "error", "error": "unmounting %s: %s" % (image["host"], e)})
        try:
            self.in_host_ns(unmount_hosts)
        except OSError as e:
            emit({"type": "error", "error": "entering the server's mount namespace: %s" % e})
        for image in images:
            try:
                if image.get("stage"):
                    unmount(image["stage"])
                os.unlink(image["path"])
            except FileNotFoundError:
                pass
            except OSError as e:
                emit({"type": "error", "error": "releasing %s: %s" % (image["path"], e)})
        if self.spare is not None:
            self.discard_spare(self.spare)
            self.spare = None

    def done(self, req, action):
        try:
            action()
            emit({"type": "done", "ref": req.get("ref"), "error": None})
        except Exception as e:
            emit({"type": "done", "ref": req.get("ref"), "error": str(e) or repr(e)})

    def probe(self, image):
        """Makes and mounts one image and releases it: proves mkfs, loop devices and ext4 work
        (and makes the first spare, for the default quota)."""
        self.mount_image(image, None, None)
        try:
            allocated = os.stat(image["path"]).st_blocks * 512
            if allocated > 64 << 20:
                raise OSError(errno.EOPNOTSUPP, "the image takes %d MiB on disk: the data"
                              " directory's file system does not keep holes, and every sandbox"
                              " would write its whole quota" % (allocated >> 20))
            probe_file = os.path.join(image["stage"] or image["host"], "probe")
            with open(probe_file, "wb") as f:
                f.write(b"pysandbox")
        finally:
            self.release(image)

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

    def finish(self):
        """The server closed our input or died: its sandboxes and its mounts go with it."""
        self.kill_all()
        self.release_all()

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
            elif op == "release":
                self.images.pop(req.get("id"), None)
                self.done(req, lambda: self.release(req))
            elif op == "probe":
                self.done(req, lambda: self.probe(req["image"]))
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
            events = self.selector.select(0 if self.spare_for is not None else None)
            if not events:
                self.make_spare()
            for key, _ in events:
                if key.data == "wake":
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    self.reap()
                    if os.getppid() != self.parent:
                        self.finish()
                        return
                elif key.data == "info":
                    self.read_info(key.fd)
                else:
                    try:
                        chunk = os.read(0, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        self.finish()
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
    # When the server dies (even by SIGKILL) we are told with SIGTERM, and the loop wakes, finds
    # our parent gone, and kills the sandboxes and unmounts the workspaces before it exits (its
    # input's end would tell it too, a moment later). Dying at once instead would leave mount
    # points on the host that no one else may remove. A SIGTERM while the server lives (sent to
    # the whole process group, say) changes nothing: the server stops us by closing our input.
    signal.signal(signal.SIGTERM, lambda *_: None)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    # Orphans of a killed sandbox (its PID 1, once bwrap's monitor is gone) become our children,
    # so that we reap them at once instead of leaving zombies to the host's init.
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    setup, rest = read_setup()
    if os.getppid() != setup.get("parent"):
        sys.exit("pysandbox launcher: the server is gone")
    host_ns = own_ns = None
    if setup.get("stage"):
        host_ns = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        stage(setup["stage"]["source"], setup["stage"]["target"])
        own_ns = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    launcher = Launcher(setup, host_ns, own_ns)
    launcher.inbuf = rest
    emit({"type": "hello", "pid": os.getpid()})
    launcher.loop()


if __name__ == "__main__":
    main()
