package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The sandbox's system call filter: an allowlist at least as strict as Docker's default profile.
 * Everything not listed fails with EPERM. Left out on purpose, as Docker does for a container
 * without CAP_SYS_ADMIN and friends: mount and namespace creation ({@code mount}, {@code umount2},
 * {@code pivot_root}, {@code unshare}, {@code setns}, namespace flags of {@code clone}), kernel
 * modules, kexec, reboot, swap, clock and time changes, keyrings, {@code bpf},
 * {@code perf_event_open}, {@code userfaultfd}, {@code io_uring}, {@code open_by_handle_at},
 * {@code kcmp}, raw I/O ports, {@code quotactl}, {@code acct}, {@code syslog}, {@code sethostname}.
 */
final class SeccompProfile {
    private static final int EPERM = 1;
    private static final int ENOSYS = 38;
    /** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET */
    private static final long CLONE_NAMESPACE_FLAGS = 0x7E020000L;
    /** personality(2) values Docker permits: PER_LINUX, PER_LINUX32, UNAME26 (alone and with PER_LINUX32), query. */
    private static final List<Long> PERSONALITIES = List.of(0x0L, 0x8L, 0x20000L, 0x20008L, 0xffffffffL);

    static final List<String> ALLOWED = List.of(
            "accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind", "brk", "cachestat", "capget", "capset",
            "chdir", "chmod", "chown", "chroot", "clock_adjtime", "clock_getres", "clock_gettime", "clock_nanosleep",
            "close", "close_range", "connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
            "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait",
            "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2",
            "fadvise64", "fallocate", "fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat",
            "fcntl", "fdatasync", "fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
            "fstatfs", "fsync", "ftruncate", "futex", "futex_requeue", "futex_wait", "futex_waitv", "futex_wake",
            "futimesat", "get_mempolicy", "get_robust_list", "getcpu", "getcwd", "getdents", "getdents64", "getegid",
            "geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
            "getpriority", "getrandom", "getresgid", "getresuid", "getrlimit", "getrusage", "getsid", "getsockname",
            "getsockopt", "gettid", "gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
            "inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents", "io_pgetevents",
            "io_setup", "io_submit", "ioctl", "ioprio_get", "ioprio_set", "kill", "landlock_add_rule",
            "landlock_create_ruleset", "landlock_restrict_self", "lchown", "lgetxattr", "link", "linkat", "listen",
            "listxattr", "llistxattr", "lremovexattr", "lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack",
            "mbind", "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod", "mknodat",
            "mlock", "mlock2", "mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify", "mq_open",
            "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap", "msgctl", "msgget", "msgrcv", "msgsnd", "msync",
            "munlock", "munlockall", "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "open", "openat",
            "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", "pkey_free",
            "pkey_mprotect", "poll", "ppoll", "prctl", "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease",
            "process_vm_readv", "process_vm_writev", "pselect6", "ptrace", "pwrite64", "pwritev", "pwritev2", "read",
            "readahead", "readlink", "readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg", "remap_file_pages",
            "removexattr", "rename", "renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction",
            "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
            "rt_tgsigqueueinfo", "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity",
            "sched_getattr", "sched_getparam", "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
            "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
            "semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg", "sendto", "set_mempolicy",
            "set_robust_list", "set_tid_address", "setfsgid", "setfsuid", "setgid", "setgroups", "setitimer",
            "setpgid", "setpriority", "setregid", "setresgid", "setresuid", "setreuid", "setrlimit", "setsid",
            "setsockopt", "setuid", "setxattr", "shmat", "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack",
            "signalfd", "signalfd4", "socket", "socketpair", "splice", "stat", "statfs", "statx", "symlink",
            "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create",
            "timer_delete", "timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime",
            "timerfd_settime", "times", "tkill", "truncate", "umask", "uname", "unlink", "unlinkat", "utime",
            "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid", "write", "writev");

    private SeccompProfile() {
    }

    static ObjectNode build(ObjectMapper json) {
        ObjectNode profile = json.createObjectNode();
        profile.put("defaultAction", "SCMP_ACT_ERRNO");
        profile.put("defaultErrnoRet", EPERM);
        // 64-bit and 32-bit x86; not x32, which kernels ship without (CONFIG_X86_X32_ABI) or off by default:
        // runc compiles each architecture into the filter at every start, x32's about 5 ms of its ~70 here.
        profile.putArray("architectures").add("SCMP_ARCH_X86_64").add("SCMP_ARCH_X86");
        ArrayNode rules = profile.putArray("syscalls");

        ObjectNode allow = rules.addObject();
        ArrayNode names = allow.putArray("names");
        ALLOWED.forEach(names::add);
        allow.put("action", "SCMP_ACT_ALLOW");

        // clone without any namespace flag; clone3 cannot be filtered by flags, so libc falls back to clone.
        ObjectNode clone = rules.addObject();
        clone.putArray("names").add("clone");
        clone.put("action", "SCMP_ACT_ALLOW");
        ObjectNode cloneArg = clone.putArray("args").addObject();
        cloneArg.put("index", 0);
        cloneArg.put("value", CLONE_NAMESPACE_FLAGS);
        cloneArg.put("valueTwo", 0);
        cloneArg.put("op", "SCMP_CMP_MASKED_EQ");

        ObjectNode clone3 = rules.addObject();
        clone3.putArray("names").add("clone3");
        clone3.put("action", "SCMP_ACT_ERRNO");
        clone3.put("errnoRet", ENOSYS);

        for (long persona : PERSONALITIES) {
            ObjectNode rule = rules.addObject();
            rule.putArray("names").add("personality");
            rule.put("action", "SCMP_ACT_ALLOW");
            ObjectNode arg = rule.putArray("args").addObject();
            arg.put("index", 0);
            arg.put("value", persona);
            arg.put("op", "SCMP_CMP_EQ");
        }
        return profile;
    }
}
