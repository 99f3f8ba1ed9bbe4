"""Writes pysandbox's seccomp filter (BPF) for bwrap --seccomp. Run on the host by the server,
with Debian's python3-seccomp (libseccomp's binding): python3 -I seccomp_filter.py OUT [--net]

Everything is allowed except what a sandboxed Python program has no business doing: tracing
and reading other processes, loading kernel code or BPF, keyrings, new namespaces and mounts,
io_uring (a syscall surface that bypasses this filter), rebooting. Without --net, sockets other
than AF_UNIX are refused too (the network namespace already has no route; this is the second
line). Refused calls fail with EPERM (EAFNOSUPPORT for socket families), they do not kill.

FIFOs and file leases are refused too: both are ways to make the server's open of a workspace
file wait (for a writer; for the 45 s lease-break time). The server opens without blocking
anyway (O_NONBLOCK, checked on the descriptor); this is the second line.
"""
import errno
import sys

import seccomp

S_IFMT, S_IFIFO = 0o170000, 0o010000
F_SETLEASE = 1024

CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME

DENIED = [
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module",
    "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "syslog", "lookup_dcookie",
    "open_by_handle_at", "name_to_handle_at",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "vhangup",
]


def build(path, allow_network):
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):
            pass  # not a syscall on this architecture
    # clone with any new-namespace flag; clone3 hides its flags in memory, so it is refused
    # with ENOSYS and the C library falls back to clone.
    f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEW, CLONE_NEW))
    for bit in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080):
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, bit, bit))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    # mknod(path, mode, dev) / mknodat(dirfd, path, mode, dev) making a FIFO; fcntl(F_SETLEASE).
    for call, mode_arg in (("mknod", 1), ("mknodat", 2)):
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(mode_arg, seccomp.MASKED_EQ, S_IFMT, S_IFIFO))
        except (RuntimeError, ValueError, OSError):
            pass  # not a syscall on this architecture (aarch64 has mknodat only)
    for call in ("fcntl", "fcntl64"):
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(1, seccomp.EQ, F_SETLEASE))
        except (RuntimeError, ValueError, OSError):
            pass
    if not allow_network:
        for call in ("socket", "socketpair"):
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), call, seccomp.Arg(0, seccomp.NE, 1))  # AF_UNIX
    with open(path, "wb") as out:
        f.export_bpf(out)


if __name__ == "__main__":
    build(sys.argv[1], "--net" in sys.argv[2:])
