"""Writes pysandbox's seccomp rules, run on the host by the server with Debian's python3-seccomp
(libseccomp's binding):

    python3 -I seccomp_filter.py OUT [--net]            BPF for bwrap --seccomp
    python3 -I seccomp_filter.py OUT [--net] --docker   the same rules as a Docker/OCI seccomp
                                                        profile (JSON) for the container backend

Everything is allowed except what a sandboxed Python program has no business doing: tracing
and reading other processes, loading kernel code or BPF, keyrings, new namespaces and mounts,
io_uring (a syscall surface that bypasses this filter), rebooting. Without --net, sockets other
than AF_UNIX are refused too (the network namespace already has no route; this is the second
line). Refused calls fail with EPERM (EAFNOSUPPORT for socket families), they do not kill.

FIFOs and file leases are refused too: both are ways to make the server's open of a workspace
file wait (for a writer; for the 45 s lease-break time). The server opens without blocking
anyway (O_NONBLOCK, checked on the descriptor); this is the second line.

The container profile (--docker) replaces the engine's default profile, so it must not allow
what that default refuses either. It is therefore an allow-list, as the engines' defaults are:
ALLOWED below is what both Docker's and Podman's default profiles allow a container without
capabilities (sandboxes run with cap-drop ALL); from it, our refusals are taken out with the same
errno as in the BPF, and what the engines refuse besides (ENGINE_DENIED) fails with EPERM as it
does there. A call that ours refuses only for some arguments is allowed for the complement of
those arguments, written out as rules of their own (every syscall's rules are disjoint, so no
rule order or precedence matters). Anything not listed (syscalls newer than this list) fails
with ENOSYS, which the C library takes as "fall back to the older call". With --net the profile
lets through the socket families a program with a way out needs (AF_UNIX, AF_INET, AF_INET6,
AF_NETLINK but not its audit protocol) and refuses the others with EAFNOSUPPORT; the engines
refuse AF_VSOCK (Docker) and NETLINK_AUDIT (Podman), the BPF for bwrap refuses none. The
profile is written for the host's architecture only: other ABIs (i386 on x86_64) get the
runtime's bad-architecture action, as with the BPF.
"""
import errno
import json
import sys

import seccomp

S_IFMT, S_IFIFO = 0o170000, 0o010000
S_IFSOCK, S_IFREG, S_IFBLK, S_IFCHR = 0o140000, 0o100000, 0o060000, 0o020000
F_SETLEASE = 1024
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_AUDIT = 9

CLONE_NEW_BITS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
CLONE_NEW = sum(CLONE_NEW_BITS)

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

# Container profile only. What Docker's default profile (moby profiles/seccomp/default.json) and
# Podman's (containers-common 0.50, /usr/share/containers/seccomp.json) both allow a container
# without capabilities; names a given architecture lacks are dropped when the profile is written.
# clone, which Docker allows only without namespace flags, is here; its arguments are ours below.
ALLOWED = """
    accept accept4 access adjtimex alarm arch_prctl bind brk capget capset chdir chmod chown
    chown32 clock_adjtime clock_adjtime64 clock_getres clock_getres_time64 clock_gettime
    clock_gettime64 clock_nanosleep clock_nanosleep_time64 clone close close_range connect
    copy_file_range creat dup dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_ctl_old
    epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 execve execveat exit
    exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir fchmod
    fchmodat fchown fchown32 fchownat fcntl fcntl64 fdatasync fgetxattr flistxattr flock fork
    fremovexattr fsetxattr fstat fstat64 fstatat64 fstatfs fstatfs64 fsync ftruncate ftruncate64
    futex futex_time64 futimesat get_robust_list get_thread_area getcpu getcwd getdents
    getdents64 getegid getegid32 geteuid geteuid32 getgid getgid32 getgroups getgroups32
    getitimer getpeername getpgid getpgrp getpid getppid getpriority getrandom getresgid
    getresgid32 getresuid getresuid32 getrlimit getrusage getsid getsockname getsockopt gettid
    gettimeofday getuid getuid32 getxattr inotify_add_watch inotify_init inotify_init1
    inotify_rm_watch io_cancel io_destroy io_getevents io_setup io_submit ioctl ioprio_get
    ioprio_set ipc kill landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown
    lchown32 lgetxattr link linkat listen listxattr llistxattr lremovexattr lseek lsetxattr lstat
    lstat64 madvise membarrier memfd_create memfd_secret mincore mkdir mkdirat mknod mknodat mlock
    mlock2 mlockall mmap mmap2 modify_ldt mprotect mq_getsetattr mq_notify mq_open
    mq_timedreceive mq_timedreceive_time64 mq_timedsend mq_timedsend_time64 mq_unlink mremap
    msgctl msgget msgrcv msgsnd msync munlock munlockall munmap name_to_handle_at nanosleep
    newfstatat open openat openat2 pause pidfd_open pidfd_send_signal pipe pipe2 pkey_alloc
    pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 preadv preadv2 prlimit64
    process_mrelease pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read readahead readlink
    readlinkat readv recv recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages removexattr
    rename renameat renameat2 restart_syscall rmdir rseq rt_sigaction rt_sigpending
    rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend rt_sigtimedwait
    rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_get_priority_max sched_get_priority_min
    sched_getaffinity sched_getattr sched_getparam sched_getscheduler sched_rr_get_interval
    sched_rr_get_interval_time64 sched_setaffinity sched_setattr sched_setparam
    sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop
    semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto set_robust_list
    set_thread_area set_tid_address setfsgid setfsgid32 setfsuid setfsuid32 setgid setgid32
    setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid
    setresgid32 setresuid setresuid32 setreuid setreuid32 setrlimit setsid setsockopt setuid
    setuid32 setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4
    sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs statfs64 statx symlink
    symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete
    timer_getoverrun timer_gettime timer_gettime64 timer_settime timer_settime64 timerfd_create
    timerfd_gettime timerfd_gettime64 timerfd_settime timerfd_settime64 times tkill truncate
    truncate64 ugetrlimit umask uname unlink unlinkat utime utimensat utimensat_time64 utimes
    vfork wait4 waitid waitpid write writev
""".split()

# Container profile only: what either engine's default refuses a container without capabilities
# (by name, by a missing capability, or as obsolete) that ours above does not; EPERM, as there.
ENGINE_DENIED = [
    "bdflush", "clock_settime64", "fanotify_init", "get_mempolicy", "io_pgetevents",
    "io_pgetevents_time64", "mbind", "migrate_pages", "move_pages", "nfsservctl", "nice",
    "oldfstat", "oldlstat", "oldolduname", "oldstat", "olduname", "pciconfig_iobase",
    "pciconfig_read", "pciconfig_write", "process_madvise", "quotactl_fd", "set_mempolicy",
    "set_mempolicy_home_node", "setdomainname", "sethostname", "sgetmask", "ssetmask", "stime",
    "swapcontext", "sysfs", "umount", "uselib", "ustat", "vm86", "vm86old", "vmsplice",
]

# The personalities Docker's and Podman's defaults allow (PER_LINUX, PER_LINUX32, UNAME26 and
# their combination, and 0xffffffff to query); the others, such as ADDR_NO_RANDOMIZE, are not.
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

ALLOW = None  # a case's errno; None = allowed


def _blocks(lo, hi):
    """[lo, hi] as aligned blocks of values, each one MASKED_EQ comparison (like CIDR ranges)."""
    out = []
    while lo <= hi:
        size = 1
        while lo % (size * 2) == 0 and lo + size * 2 - 1 <= hi:
            size *= 2
        out.append(("MASKED_EQ", (2**64 - 1) & ~(size - 1), lo) if size > 1 else ("EQ", lo, 0))
        lo += size
    return out


def _families(allowed, refused_errno):
    """Cases for socket(domain, ...): the families in allowed pass, all others are refused."""
    cases, lo = [], 0
    for family in sorted(allowed):
        cases += [(refused_errno, ((0, op, a, b),)) for op, a, b in _blocks(lo, family - 1)]
        cases.append((ALLOW, ((0, "EQ", family, 0),)))
        lo = family + 1
    cases.append((refused_errno, ((0, "GT", lo - 1, 0),)))
    return cases


def rules(allow_network, container=False):
    """Every rule as {syscall: [(errno or ALLOW, ((arg index, op, a, b), ...)), ...]}: ours (the
    BPF adds the refusals, everything else being allowed) or, with container, the whole profile
    (refusals and what is allowed; anything not named is refused). Each syscall's cases are
    disjoint. For MASKED_EQ, a is the mask and b the value."""
    r = {name: [(errno.EPERM, ())] for name in DENIED}
    # clone with any new-namespace flag (the first rule, all of them, is kept for the BPF's sake:
    # it is what earlier versions wrote); clone3 hides its flags in memory, so it is refused with
    # ENOSYS and the C library falls back to clone.
    r["clone"] = [(errno.EPERM, ((0, "MASKED_EQ", CLONE_NEW, CLONE_NEW),))]
    r["clone"] += [(errno.EPERM, ((0, "MASKED_EQ", bit, bit),)) for bit in CLONE_NEW_BITS]
    r["clone3"] = [(errno.ENOSYS, ())]
    # mknod(path, mode, dev) / mknodat(dirfd, path, mode, dev) making a FIFO; fcntl(F_SETLEASE).
    for call, mode_arg in (("mknod", 1), ("mknodat", 2)):
        r[call] = [(errno.EPERM, ((mode_arg, "MASKED_EQ", S_IFMT, S_IFIFO),))]
    for call in ("fcntl", "fcntl64"):
        r[call] = [(errno.EPERM, ((1, "EQ", F_SETLEASE, 0),))]
    if not allow_network:
        for call in ("socket", "socketpair"):
            r[call] = [(errno.EAFNOSUPPORT, ((0, "NE", AF_UNIX, 0),))]
    if not container:
        return r

    # The complement of every argument-dependent refusal, where the engines allow the call.
    r["clone"].append((ALLOW, ((0, "MASKED_EQ", CLONE_NEW, 0),)))
    for call, mode_arg in (("mknod", 1), ("mknodat", 2)):
        r[call] += [(ALLOW, ((mode_arg, "MASKED_EQ", S_IFMT, kind),))
                    for kind in (0, S_IFREG, S_IFCHR, S_IFBLK, S_IFSOCK)]
    for call in ("fcntl", "fcntl64"):
        r[call].append((ALLOW, ((1, "NE", F_SETLEASE, 0),)))
    if allow_network:
        r["socket"] = [c for c in _families((AF_UNIX, AF_INET, AF_INET6, AF_NETLINK), errno.EAFNOSUPPORT)
                       if c[1] != ((0, "EQ", AF_NETLINK, 0),)]
        r["socket"] += [(ALLOW, ((0, "EQ", AF_NETLINK, 0), (2, "NE", NETLINK_AUDIT, 0))),
                        (errno.EAFNOSUPPORT, ((0, "EQ", AF_NETLINK, 0), (2, "EQ", NETLINK_AUDIT, 0)))]
        r["socketpair"] = [(ALLOW, ())]
    else:
        for call in ("socket", "socketpair"):
            r[call].append((ALLOW, ((0, "EQ", AF_UNIX, 0),)))
    r["personality"] = [(ALLOW, ((0, "EQ", p, 0),)) for p in PERSONALITIES]
    for name in ENGINE_DENIED:
        r.setdefault(name, [(errno.EPERM, ())])
    for name in ALLOWED:
        r.setdefault(name, [(ALLOW, ())])
    # An argument-dependent call the engines refuse outright stays refused (fcntl64, socketcall:
    # not on 64-bit hosts, but the list must not let them in where they exist).
    for name, cases in r.items():
        if name not in ALLOWED and name not in ("socket", "personality"):
            r[name] = [c for c in cases if c[0] is not ALLOW] or [(errno.EPERM, ())]
    return r


def _arg(index, op, a, b):
    return seccomp.Arg(index, getattr(seccomp, op), a, b)


def build(path, allow_network):
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name, cases in rules(allow_network).items():
        for err, args in cases:
            try:
                f.add_rule(seccomp.ERRNO(err), name, *(_arg(*a) for a in args))
            except (RuntimeError, ValueError, OSError):
                pass  # not a syscall on this architecture (aarch64 has mknodat only, no fcntl64)
    with open(path, "wb") as out:
        f.export_bpf(out)


ARCHES = {seccomp.Arch.X86_64: "SCMP_ARCH_X86_64", seccomp.Arch.AARCH64: "SCMP_ARCH_AARCH64",
          seccomp.Arch.ARM: "SCMP_ARCH_ARM", seccomp.Arch.X86: "SCMP_ARCH_X86",
          seccomp.Arch.PPC64LE: "SCMP_ARCH_PPC64LE", seccomp.Arch.S390X: "SCMP_ARCH_S390X",
          seccomp.Arch.RISCV64: "SCMP_ARCH_RISCV64"}


def profile(allow_network):
    """The container profile as a dict, in the format docker run --security-opt seccomp=FILE reads
    (and Podman): defaultAction, architectures, syscalls[{names, action, errnoRet, args}]."""
    native = {a & 0xFFFFFFFF: n for a, n in ARCHES.items()}.get(seccomp.system_arch())
    if native is None:
        raise SystemExit("seccomp_filter.py: no container profile for architecture %d" % seccomp.system_arch())
    # Built with libseccomp as well, rule by rule, which is what the runtime (runc, crun) will do
    # with the profile: a rule it would reject fails here instead of at container start.
    check = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.ENOSYS))
    groups = {}
    for name, cases in sorted(rules(allow_network, container=True).items()):
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) < 0:
            continue  # not a syscall on this architecture
        for err, args in cases:
            if err == errno.ENOSYS:
                continue  # clone3: the default action (libseccomp refuses a rule that repeats it)
            check.add_rule(seccomp.ALLOW if err is ALLOW else seccomp.ERRNO(err), name,
                           *(_arg(*a) for a in args))
            groups.setdefault((err, args), []).append(name)
    syscalls = []
    for (err, args), names in groups.items():
        rule = {"names": names, "action": "SCMP_ACT_ALLOW" if err is ALLOW else "SCMP_ACT_ERRNO"}
        if err is not ALLOW:
            rule["errnoRet"] = err
        if args:
            rule["args"] = [{"index": i, "value": a, "valueTwo": b, "op": "SCMP_CMP_" + op}
                            for i, op, a, b in args]
        syscalls.append(rule)
    return {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": errno.ENOSYS,
            "architectures": [native], "syscalls": syscalls}


if __name__ == "__main__":
    options = sys.argv[2:]
    if "--docker" in options:
        text = json.dumps(profile("--net" in options), indent=1) + "\n"
        with open(sys.argv[1], "w") as out:
            out.write(text)
    else:
        build(sys.argv[1], "--net" in options)
