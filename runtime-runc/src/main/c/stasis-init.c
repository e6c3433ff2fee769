/*
 * stasis-init: process 1 of every Stasis sandbox.
 *
 * Jobs:
 *  - reap every process of the sandbox (orphans are re-parented to process 1);
 *  - (files per process: out, err, in (stdin, optional), pid, exit; the host may add its own);
 *  - start processes for the host, which talks to it over the unix socket /.stasis/ctl.sock (bound
 *    again on SIGUSR1, when the host has given the sandbox a new root: see stasis-reroot.c);
 *  - leave each started process's output and exit status in files under /.stasis/proc/<id>/,
 *    where the host reads them even after a restart of the service.
 *
 * Everything it holds lives inside the sandbox, so CRIU can checkpoint it with the rest. It keeps no
 * file open except its socket, and opens output files with O_APPEND (CRIU refuses to restore a
 * non-append file whose size changed).
 *
 * Wire format, both directions: a frame is a 32-bit little-endian payload length, then the payload:
 * NUL-terminated strings, the first a verb, the rest "key=value" fields (keys may repeat).
 *   spawn  id=<[a-z0-9]{1,40}> arg=.. (1+) env=K=V (0+) [cwd=/dir] [cwdfallback=1] [stdin=1|fifo]
 *          [user=UID:GID[:G1,G2,...]] (run as that user, with those supplementary groups; else as root)
 *          [pty=COLSxROWS] [wait=1]
 *          stdin=1: the file in; stdin=fifo: a FIFO "in" that the host writes to, kept open by init
 *          (so the reader sees no end of file until closestdin); pty: a terminal, stdin is then always
 *          the FIFO (see "Terminals" below)
 *          -> ok pid=N | error stage=<request|fork|open|chdir> errno=N msg=<text>
 *          (a program that cannot be executed starts anyway and ends with 127 or 126, as in a shell)
 *          then, with wait=1, when it ends: exit code=N | exit signal=N
 *   kill   pid=N signal=N [tree=1]   -> ok | error errno=N msg=..
 *   stdin  id=.. data=<hex>          -> ok n=N (the bytes init wrote into the process's stdin FIFO through
 *                                       its keeper: fewer, down to 0, while the FIFO is full, and the host
 *                                       sends the rest again) | error errno=N msg=..  For gVisor, whose
 *                                       FIFOs made inside exist only in the sentry, out of the host's reach.
 *   closestdin id=..                 -> ok   (the process reads end of file once the FIFO is drained)
 *   resize id=.. cols=N rows=N       -> ok   (the terminal's window size; its foreground job gets SIGWINCH)
 *   ping                             -> ok version=N
 *   hostname name=<name>             -> ok | error errno=N msg=..  The sandbox's hostname set (a copy
 *                                       restored from another sandbox's image takes its own). For
 *                                       gVisor, which restores its kernel's hostname with the image;
 *                                       there init holds CAP_SYS_ADMIN for it, in gVisor's kernel
 *                                       only, and drops it from the bounding set of every process it
 *                                       starts (under runc it never has it, and CRIU's script sets it).
 *   cpu                              -> ok ns=N (CPU time of every process of the sandbox so far, as its
 *                                       kernel counts it: the cpuacct cgroup at /sys/fs/cgroup/cpuacct)
 *                                       | error errno=N msg=..  For gVisor, whose host cgroup also counts
 *                                       the sentry's own work, which goes on while the sandbox is idle.
 *   quiesce                          -> ok, then the socket is closed and its file removed, and every
 *                                       connection closed (this one too); SIGUSR1 binds it again, and
 *                                       so does the file /.stasis/rebind appearing (the host makes it:
 *                                       no process to start, where a signal under gVisor takes a runsc;
 *                                       looked for every REBIND_POLL_MS while quiesced).
 *                                       For checkpoints under gVisor, whose runsc refuses to save a
 *                                       unix socket bound on the host.
 * A spawned process gets its own session; tree=1 signals that session and every descendant.
 *
 * Terminals: the master belongs to a relay process ("stasis-tty"), forked right after the program so
 * that it comes after the program in the process tree. CRIU dumps the tree in that order and refuses
 * a session whose program opened /dev/tty (every ash or dash shell does) unless the first holder of
 * the terminal it finds is that program; init itself never keeps either end. The relay copies the
 * terminal's output to "out" and the FIFO to the terminal, and ends when every slave is closed; the
 * program's exit is reported once the relay has drained the terminal (or after RELAY_DRAIN_MS).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION 6
#define PTY_PENDING 4096
#define RELAY_DRAIN_MS 500
#define EOF_AGAIN_MS 200
#define EOF_AGAIN_MAX 25
#define STATE_DIR "/.stasis"
#define PROC_DIR STATE_DIR "/proc"
#define SOCKET_PATH STATE_DIR "/ctl.sock"
#define REBIND_PATH STATE_DIR "/rebind"
#define REBIND_POLL_MS 2
#define LOG_PATH STATE_DIR "/init.log"
#define MAX_FRAME (4u << 20)
#define MAX_CONNS 256
#define MAX_PROCS 4096
#define MAX_ID 40
#define SHUTDOWN_GRACE_SECONDS 10

extern char **environ;

struct conn {
    int fd;
    unsigned char *buf;
    size_t len, cap;
};

enum proc_phase { STARTING, RUNNING, DONE };

struct proc {
    pid_t pid;
    char id[MAX_ID + 1];
    enum proc_phase phase;
    int status_fd;    /* read end of the exec-status pipe while STARTING */
    int requester;    /* fd of the connection that asked, or -1 */
    int waits;        /* whether the requester wants the exit */
    int exited;       /* reaped while still STARTING */
    int wstatus;
    int keeper_fd;    /* the stdin FIFO held open (read-write), or -1 */
    char tty[32];     /* the terminal's slave path, or "" */
    pid_t relay_pid;  /* the terminal's relay while it runs, or 0 */
    int exit_pending; /* the program ended; its exit waits for the relay */
    long long exit_deadline_ms;
};

static struct conn conns[MAX_CONNS];
static struct proc procs[MAX_PROCS];
static int listen_fd = -1, signal_fd = -1;
static int shutting_down;
static time_t shutdown_deadline;

static void log_line(const char *fmt, ...) {
    int fd = open(LOG_PATH, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if (n > (int)sizeof line - 2) n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(fd, line, n);
    (void)ignored;
    close(fd);
}

/* ---- frames ----------------------------------------------------------------------------------- */

struct out {
    char buf[8192];
    size_t len;
};

static void out_add(struct out *o, const char *fmt, ...) {
    if (o->len >= sizeof o->buf - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, sizeof o->buf - o->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof o->buf - o->len) n = sizeof o->buf - o->len - 1;
    o->len += n + 1; /* keep the NUL as the field separator */
}

static void send_frame(int fd, struct out *o) {
    if (fd < 0) return;
    unsigned char head[4] = {o->len & 0xff, (o->len >> 8) & 0xff, (o->len >> 16) & 0xff, (o->len >> 24) & 0xff};
    /* Replies are small and the host reads them promptly; a blocking write keeps ordering simple. */
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (send(fd, head, 4, MSG_NOSIGNAL) == 4) send(fd, o->buf, o->len, MSG_NOSIGNAL);
    fcntl(fd, F_SETFL, flags);
}

static void reply_error(int fd, const char *stage, int err, const char *msg) {
    struct out o = {0};
    out_add(&o, "error");
    out_add(&o, "stage=%s", stage);
    out_add(&o, "errno=%d", err);
    out_add(&o, "msg=%s", msg);
    send_frame(fd, &o);
}

/* ---- processes -------------------------------------------------------------------------------- */

static struct proc *proc_alloc(void) {
    for (int i = 0; i < MAX_PROCS; i++)
        if (procs[i].pid == 0) return &procs[i];
    return NULL;
}

static struct proc *proc_by_pid(pid_t pid) {
    for (int i = 0; i < MAX_PROCS; i++)
        if (procs[i].pid == pid) return &procs[i];
    return NULL;
}

static void proc_reset(struct proc *p) {
    memset(p, 0, sizeof *p);
    p->status_fd = -1;
    p->requester = -1;
    p->keeper_fd = -1;
}

static void proc_free(struct proc *p) {
    if (p->status_fd >= 0) close(p->status_fd);
    if (p->keeper_fd >= 0) close(p->keeper_fd);
    proc_reset(p);
}

static struct proc *proc_by_id(const char *id) {
    for (int i = 0; i < MAX_PROCS; i++)
        if (procs[i].pid && !strcmp(procs[i].id, id)) return &procs[i];
    return NULL;
}

static struct proc *proc_by_relay(pid_t pid) {
    for (int i = 0; i < MAX_PROCS; i++)
        if (procs[i].pid && procs[i].relay_pid == pid) return &procs[i];
    return NULL;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Copies what the terminal has written to "out"; returns 0 once every slave is closed. */
static int relay_output(int master, int out) {
    unsigned char buf[16384];
    for (;;) {
        ssize_t n = read(master, buf, sizeof buf);
        if (n > 0) {
            for (ssize_t off = 0, w; off < n; off += w)
                if ((w = write(out, buf + off, n - off)) <= 0) break;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 1;
        return 0; /* EIO */
    }
}

/*
 * The relay process's whole life: fds 0, 1 and 2 are the master, the FIFO (read-only: init's keeper
 * is its only writer, so its end of file is closestdin) and "out".
 *
 * At the end of input the relay types Ctrl-D, as a keyboard would. One is not always enough: typed
 * while a shell runs a command, the terminal is in canonical mode and files it as an end-of-line
 * marker, which the shell's line editor, back in raw mode at its next prompt, reads as a NUL in its
 * line, and the shell would wait forever. So while the terminal is in raw mode and its program runs
 * on, the relay types Ctrl-U (erase the line) and Ctrl-D again, EOF_AGAIN_MS apart, EOF_AGAIN_MAX
 * times at most, as a user at a stuck prompt would.
 */
static void run_relay(void) {
    enum { MASTER = 0, FIFO = 1, OUT = 2 };
    unsigned char pending[PTY_PENDING]; /* input taken from the FIFO, not yet by the terminal */
    size_t pending_len = 0;
    int input_open = 1, eof_again_left = EOF_AGAIN_MAX;
    long long eof_again_at = 0;
    for (;;) {
        int timeout = -1;
        if (!input_open && eof_again_left > 0) {
            long long left = eof_again_at - now_ms();
            timeout = left < 0 ? 0 : (int)left;
        }
        struct pollfd f[2] = {{.fd = MASTER, .events = POLLIN | (pending_len ? POLLOUT : 0)},
                              {.fd = input_open && pending_len < sizeof pending ? FIFO : -1, .events = POLLIN}};
        if (poll(f, 2, timeout) < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        if ((f[0].revents & (POLLIN | POLLHUP | POLLERR)) && !relay_output(MASTER, OUT)) _exit(0);
        if (f[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(FIFO, pending + pending_len, sizeof pending - pending_len);
            if (n > 0) pending_len += n;
            else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                input_open = 0;
                close(FIFO);
                if (pending_len < sizeof pending) pending[pending_len++] = 0x04;
                eof_again_at = now_ms() + EOF_AGAIN_MS;
            }
        }
        if (!input_open && eof_again_left > 0 && now_ms() >= eof_again_at) {
            struct termios t;
            if (pending_len + 2 <= sizeof pending && tcgetattr(MASTER, &t) == 0 && !(t.c_lflag & ICANON)) {
                pending[pending_len++] = 0x15;
                pending[pending_len++] = 0x04;
                eof_again_left--;
            }
            eof_again_at = now_ms() + EOF_AGAIN_MS;
        }
        if (pending_len > 0) {
            ssize_t w = write(MASTER, pending, pending_len);
            if (w > 0) {
                memmove(pending, pending + w, pending_len - w);
                pending_len -= w;
            }
        }
    }
}

/*
 * Closes every descriptor from 3 up. gVisor's sentry has no close_range: there, through the list in
 * /proc/self/fd (its own descriptor found in that list is closed last, by closedir).
 */
static void close_from_3(void) {
    if (close_range(3, ~0U, 0) == 0) return;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return;
    int own = dirfd(dir);
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        int fd = atoi(entry->d_name);
        if (fd >= 3 && fd != own) close(fd);
    }
    closedir(dir);
}

/* Forks the relay; it keeps nothing of init but the three fds it needs. */
static pid_t start_relay(int master, int fifo, int out) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGTERM, SIG_DFL);
    prctl(PR_SET_NAME, "stasis-tty");
    /* init's own 0, 1 and 2 are taken, so none of the three is among them and no move clobbers another */
    if (dup2(master, 0) < 0 || dup2(fifo, 1) < 0 || dup2(out, 2) < 0) _exit(1);
    /* Under gVisor, a socket init has bound would also keep runsc from saving the sandbox. */
    close_from_3();
    /* The FIFO again, read-only: the inherited descriptor also writes, and would hide the end of input. */
    int reader = open("/proc/self/fd/1", O_RDONLY | O_NONBLOCK);
    if (reader < 0 || dup2(reader, 1) < 0) _exit(1);
    close(reader);
    run_relay();
    _exit(0);
}

static int valid_id(const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n > MAX_ID) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9'))) return 0;
    return 1;
}

/* Writes the exit status next to the output, atomically: readers see a whole file or none. */
static void write_exit_file(const char *id, int wstatus) {
    char tmp[128], final[128], text[64];
    snprintf(tmp, sizeof tmp, PROC_DIR "/%s/exit.tmp", id);
    snprintf(final, sizeof final, PROC_DIR "/%s/exit", id);
    int n = WIFSIGNALED(wstatus) ? snprintf(text, sizeof text, "signal=%d\n", WTERMSIG(wstatus))
                                 : snprintf(text, sizeof text, "code=%d\n", WEXITSTATUS(wstatus));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        log_line("exit file %s: %s", tmp, strerror(errno));
        return;
    }
    ssize_t ignored = write(fd, text, n);
    (void)ignored;
    close(fd);
    if (rename(tmp, final) != 0) log_line("rename %s: %s", final, strerror(errno));
}

/* The pid next to the output, so that a background process can be found again by whoever reads the files. */
static void write_pid_file(const char *id, pid_t pid) {
    char tmp[128], final[128], text[32];
    snprintf(tmp, sizeof tmp, PROC_DIR "/%s/pid.tmp", id);
    snprintf(final, sizeof final, PROC_DIR "/%s/pid", id);
    int n = snprintf(text, sizeof text, "%d\n", (int)pid);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return;
    ssize_t ignored = write(fd, text, n);
    (void)ignored;
    close(fd);
    rename(tmp, final);
}

static void notify_exit(struct proc *p, int wstatus) {
    write_exit_file(p->id, wstatus);
    if (p->waits && p->requester >= 0) {
        struct out o = {0};
        out_add(&o, "exit");
        if (WIFSIGNALED(wstatus)) out_add(&o, "signal=%d", WTERMSIG(wstatus));
        else out_add(&o, "code=%d", WEXITSTATUS(wstatus));
        send_frame(p->requester, &o);
    }
}

/* Runs in the child between fork and exec; reports a failure through the status pipe. */
static void child_fail(int status_fd, const char *stage, int err) {
    char msg[64];
    int n = snprintf(msg, sizeof msg, "%s %d", stage, err);
    ssize_t ignored = write(status_fd, msg, n);
    (void)ignored;
    _exit(127);
}

static int open_output(const char *id, const char *name) {
    char path[128];
    snprintf(path, sizeof path, PROC_DIR "/%s/%s", id, name);
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0640);
}

#define MAX_GROUPS 64

/* Who a process runs as: set, or root (init's own ids). */
struct run_as {
    int set;
    uid_t uid;
    gid_t gid;
    int ngroups;
    gid_t groups[MAX_GROUPS];
};

/* "UID:GID[:G1,G2,...]"; 0 if malformed. */
static int parse_run_as(const char *text, struct run_as *as) {
    char *end;
    unsigned long uid = strtoul(text, &end, 10);
    if (end == text || *end != ':' || uid > 65535) return 0;
    const char *g = end + 1;
    unsigned long gid = strtoul(g, &end, 10);
    if (end == g || (*end != ':' && *end != '\0') || gid > 65535) return 0;
    as->uid = (uid_t) uid;
    as->gid = (gid_t) gid;
    as->ngroups = 0;
    while (*end == ':' || *end == ',') {
        g = end + 1;
        unsigned long extra = strtoul(g, &end, 10);
        if (end == g || extra > 65535 || as->ngroups == MAX_GROUPS) return 0;
        as->groups[as->ngroups++] = (gid_t) extra;
    }
    if (*end != '\0') return 0;
    as->set = 1;
    return 1;
}

static void child_exec(int status_fd, const char *id, char **argv, char **envp, const char *cwd, int cwd_fallback,
                       int stdin_mode, int tty, const struct run_as *as) {
    /* init's own privilege (see "hostname") is not the program's: gone from the bounding set, exec cannot grant it. */
    if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0 && errno != EINVAL) child_fail(status_fd, "fork", errno);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    setsid();

    if (tty >= 0) {
        if (ioctl(tty, TIOCSCTTY, 0) < 0) child_fail(status_fd, "open", errno);
        if (dup2(tty, 0) < 0 || dup2(tty, 1) < 0 || dup2(tty, 2) < 0) child_fail(status_fd, "open", errno);
        if (tty > 2) close(tty);
    } else {
        char path[128];
        snprintf(path, sizeof path, PROC_DIR "/%s/in", id);
        int in = stdin_mode == 0 ? open("/dev/null", O_RDONLY) : open(path, O_RDONLY | O_NOFOLLOW);
        if (in < 0) child_fail(status_fd, "open", errno);
        int out = open_output(id, "out");
        if (out < 0) child_fail(status_fd, "open", errno);
        int err = open_output(id, "err");
        if (err < 0) child_fail(status_fd, "open", errno);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) child_fail(status_fd, "open", errno);
        if (in > 2) close(in);
        if (out > 2) close(out);
        if (err > 2) close(err);
    }

    /* After its files are open (they belong to root), before the working directory (which the user must be able to enter). */
    if (as->set) {
        if (setgroups(as->ngroups, as->groups) != 0 || setgid(as->gid) != 0 || setuid(as->uid) != 0)
            child_fail(status_fd, "setuid", errno);
    }
    if (cwd && chdir(cwd) != 0) {
        if (!cwd_fallback || chdir("/") != 0) child_fail(status_fd, "chdir", errno);
    }
    environ = envp; /* execvp searches the PATH of the new environment */
    execvp(argv[0], argv);
    /* As a shell does: the process starts and ends with 127 (not found) or 126 (not executable). */
    int e = errno;
    dprintf(2, "stasis: %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

/* The stdin FIFO, created if needed and held open read-write by init (the "keeper"). */
static int open_fifo(const char *id) {
    char path[128];
    snprintf(path, sizeof path, PROC_DIR "/%s/in", id);
    if (mkfifo(path, 0600) != 0 && errno != EEXIST) return -1;
    return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
}

/* A new terminal: the master (non-blocking, for the relay) and the slave's path. */
static int open_pty(int cols, int rows, char *slave, size_t slave_len) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, slave, slave_len) != 0) {
        close(master);
        return -1;
    }
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    ioctl(master, TIOCSWINSZ, &ws);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    return master;
}

static void handle_spawn(int fd, char **fields, int nfields) {
    const char *id = NULL, *cwd = NULL;
    int cwd_fallback = 0, stdin_mode = 0, waits = 0, nargs = 0, nenv = 0, cols = 0, rows = 0, bad_user = 0;
    struct run_as as = {0};
    for (int i = 0; i < nfields; i++) {
        if (!strncmp(fields[i], "arg=", 4)) nargs++;
        else if (!strncmp(fields[i], "env=", 4)) nenv++;
    }
    char **argv = calloc(nargs + 1, sizeof(char *));
    char **envp = calloc(nenv + 1, sizeof(char *));
    if (!argv || !envp) {
        reply_error(fd, "fork", ENOMEM, "out of memory");
        free(argv);
        free(envp);
        return;
    }
    int a = 0, e = 0;
    for (int i = 0; i < nfields; i++) {
        char *f = fields[i];
        if (!strncmp(f, "arg=", 4)) argv[a++] = f + 4;
        else if (!strncmp(f, "env=", 4)) envp[e++] = f + 4;
        else if (!strncmp(f, "id=", 3)) id = f + 3;
        else if (!strncmp(f, "cwd=", 4)) cwd = f + 4;
        else if (!strcmp(f, "cwdfallback=1")) cwd_fallback = 1;
        else if (!strcmp(f, "stdin=1")) stdin_mode = 1;
        else if (!strcmp(f, "stdin=fifo")) stdin_mode = 2;
        else if (!strncmp(f, "pty=", 4) && sscanf(f + 4, "%dx%d", &cols, &rows) == 2) stdin_mode = 2;
        else if (!strcmp(f, "wait=1")) waits = 1;
        else if (!strncmp(f, "user=", 5) && !parse_run_as(f + 5, &as)) bad_user = 1;
    }
    struct proc *p = NULL;
    int pipefd[2] = {-1, -1};
    if (!id || !valid_id(id)) {
        reply_error(fd, "request", EINVAL, "missing or invalid id");
        goto done;
    }
    if (nargs == 0) {
        reply_error(fd, "request", EINVAL, "no arguments");
        goto done;
    }
    if (bad_user) {
        reply_error(fd, "request", EINVAL, "invalid user (UID:GID[:G1,G2,...], ids up to 65535)");
        goto done;
    }
    p = proc_alloc();
    if (!p) {
        reply_error(fd, "fork", EAGAIN, "too many processes tracked");
        goto done;
    }
    char dir[128];
    snprintf(dir, sizeof dir, PROC_DIR "/%s", id);
    if (mkdir(dir, 0711) != 0 && errno != EEXIST) {
        reply_error(fd, "open", errno, strerror(errno));
        goto done;
    }
    int keeper = -1, master = -1, tty = -1, out = -1;
    char slave[32] = {0};
    if (stdin_mode == 2 && (keeper = open_fifo(id)) < 0) {
        reply_error(fd, "open", errno, strerror(errno));
        goto done;
    }
    if (cols > 0) {
        /* init opens the slave too, so that the terminal has a slave before the relay starts */
        if (cols > 10000 || rows < 1 || rows > 10000 || (master = open_pty(cols, rows, slave, sizeof slave)) < 0
            || (tty = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || (out = open_output(id, "out")) < 0) {
            reply_error(fd, "open", errno ? errno : EINVAL, "cannot open a terminal");
            goto undo_io;
        }
        fcntl(out, F_SETFD, FD_CLOEXEC);
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        reply_error(fd, "fork", errno, strerror(errno));
        goto undo_io;
    }
    pid_t pid = fork();
    if (pid < 0) {
        reply_error(fd, "fork", errno, strerror(errno));
        close(pipefd[0]);
        close(pipefd[1]);
        goto undo_io;
    }
    if (pid == 0) {
        close(pipefd[0]);
        child_exec(pipefd[1], id, argv, envp, cwd, cwd_fallback, stdin_mode, tty, &as);
    }
    close(pipefd[1]);
    write_pid_file(id, pid);
    if (master >= 0) {
        p->relay_pid = start_relay(master, keeper, out);
        if (p->relay_pid < 0) {
            log_line("relay for %s: %s", id, strerror(errno));
            p->relay_pid = 0;
        }
        snprintf(p->tty, sizeof p->tty, "%s", slave);
        close(master);
        close(tty);
        close(out);
    }
    p->keeper_fd = keeper;
    p->pid = pid;
    snprintf(p->id, sizeof p->id, "%s", id);
    p->phase = STARTING;
    p->status_fd = pipefd[0];
    p->requester = fd;
    p->waits = waits;
    goto done;
undo_io:
    if (keeper >= 0) close(keeper);
    if (master >= 0) close(master);
    if (tty >= 0) close(tty);
    if (out >= 0) close(out);
done:
    free(argv);
    free(envp);
}

static void handle_closestdin(int fd, char **fields, int nfields) {
    struct proc *p = NULL;
    for (int i = 0; i < nfields; i++)
        if (!strncmp(fields[i], "id=", 3)) p = proc_by_id(fields[i] + 3);
    if (!p) {
        reply_error(fd, "request", ESRCH, "no such running process");
        return;
    }
    /* A terminal has no end of file: its relay types Ctrl-D once the FIFO is drained (see run_relay). */
    if (p->keeper_fd >= 0) {
        close(p->keeper_fd);
        p->keeper_fd = -1;
    }
    struct out o = {0};
    out_add(&o, "ok");
    send_frame(fd, &o);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void handle_stdin(int fd, char **fields, int nfields) {
    struct proc *p = NULL;
    const char *hex = NULL;
    int named = 0;
    for (int i = 0; i < nfields; i++) {
        if (!strncmp(fields[i], "id=", 3)) {
            named = 1;
            p = proc_by_id(fields[i] + 3);
        } else if (!strncmp(fields[i], "data=", 5)) hex = fields[i] + 5;
    }
    size_t hex_len = hex ? strlen(hex) : 0;
    if (!named || !hex || hex_len % 2) {
        reply_error(fd, "request", EINVAL, "stdin needs id= and data= (hex)");
        return;
    }
    if (!p) {
        reply_error(fd, "request", ESRCH, "no such running process");
        return;
    }
    if (p->keeper_fd < 0) {
        reply_error(fd, "request", EPIPE, "the process's standard input is not open");
        return;
    }
    unsigned char *bytes = malloc(hex_len / 2 + 1);
    if (!bytes) {
        reply_error(fd, "stdin", ENOMEM, strerror(ENOMEM));
        return;
    }
    size_t len = 0;
    for (; len < hex_len / 2; len++) {
        int high = hex_digit(hex[2 * len]), low = hex_digit(hex[2 * len + 1]);
        if (high < 0 || low < 0) {
            free(bytes);
            reply_error(fd, "request", EINVAL, "data= is not hex");
            return;
        }
        bytes[len] = (unsigned char)(high << 4 | low);
    }
    /* The keeper is non-blocking: a full FIFO takes part of it or nothing, never holds init up. */
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(p->keeper_fd, bytes + done, len - done);
        if (n > 0) done += n;
        else if (n < 0 && errno == EINTR) continue;
        else break;
    }
    int err = errno;
    free(bytes);
    if (done == 0 && len > 0 && err != EAGAIN) {
        reply_error(fd, "stdin", err, strerror(err));
        return;
    }
    struct out o = {0};
    out_add(&o, "ok");
    out_add(&o, "n=%zu", done);
    send_frame(fd, &o);
}

static void handle_resize(int fd, char **fields, int nfields) {
    struct proc *p = NULL;
    int cols = 0, rows = 0;
    for (int i = 0; i < nfields; i++) {
        if (!strncmp(fields[i], "id=", 3)) p = proc_by_id(fields[i] + 3);
        else if (!strncmp(fields[i], "cols=", 5)) cols = atoi(fields[i] + 5);
        else if (!strncmp(fields[i], "rows=", 5)) rows = atoi(fields[i] + 5);
    }
    if (!p || !p->tty[0] || cols < 1 || rows < 1 || cols > 10000 || rows > 10000) {
        reply_error(fd, "request", EINVAL, "no such terminal, or a bad size");
        return;
    }
    /* Through the slave, opened only for this: init keeps no end of a terminal (see "Terminals"). */
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    int tty = open(p->tty, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (tty < 0 || ioctl(tty, TIOCSWINSZ, &ws) != 0) {
        reply_error(fd, "resize", errno, strerror(errno));
        if (tty >= 0) close(tty);
        return;
    }
    close(tty);
    struct out o = {0};
    out_add(&o, "ok");
    send_frame(fd, &o);
}

/* What the terminal still holds comes before the exit: with a relay, the exit waits for it. */
static void program_ended(struct proc *p, int wstatus) {
    if (p->relay_pid) {
        p->exit_pending = 1;
        p->wstatus = wstatus;
        p->exit_deadline_ms = now_ms() + RELAY_DRAIN_MS;
        return;
    }
    notify_exit(p, wstatus);
    proc_free(p);
}

/* The exec-status pipe closed (exec happened) or carried a failure. */
static void finish_start(struct proc *p) {
    char msg[64] = {0};
    ssize_t n = read(p->status_fd, msg, sizeof msg - 1);
    close(p->status_fd);
    p->status_fd = -1;
    if (n > 0) {
        char stage[16] = {0};
        int err = 0;
        sscanf(msg, "%15s %d", stage, &err);
        reply_error(p->requester, stage, err, strerror(err));
        if (!p->exited) waitpid(p->pid, NULL, 0);
        proc_free(p);
        return;
    }
    struct out o = {0};
    out_add(&o, "ok");
    out_add(&o, "pid=%d", (int)p->pid);
    send_frame(p->requester, &o);
    p->phase = RUNNING;
    if (p->exited) program_ended(p, p->wstatus);
}

static void reap(void) {
    for (;;) {
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid <= 0) return;
        struct proc *p = proc_by_pid(pid);
        if (p && p->phase == STARTING) {
            p->exited = 1;
            p->wstatus = wstatus;
        } else if (p) {
            program_ended(p, wstatus);
        } else if ((p = proc_by_relay(pid))) {
            p->relay_pid = 0;
            if (p->exit_pending) {
                notify_exit(p, p->wstatus);
                proc_free(p);
            }
        } /* else an orphan: reaping is all it needs */
    }
}

/* Reports the exits whose relays took too long (a background job may hold the terminal for ever). */
static int report_overdue_exits(void) {
    long long now = now_ms(), next = -1;
    for (int i = 0; i < MAX_PROCS; i++) {
        struct proc *p = &procs[i];
        if (!p->pid || !p->exit_pending) continue;
        if (now >= p->exit_deadline_ms) {
            notify_exit(p, p->wstatus);
            proc_free(p);
        } else if (next < 0 || p->exit_deadline_ms - now < next) next = p->exit_deadline_ms - now;
    }
    return (int)next;
}

/* ---- kill a process tree ------------------------------------------------------------------------ */

struct pinfo {
    pid_t pid, ppid, pgrp, sid;
};

static int read_stat(pid_t pid, struct pinfo *info) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *close_paren = strrchr(buf, ')'); /* the command name may contain anything */
    if (!close_paren) return -1;
    char state;
    int ppid, pgrp, sid;
    if (sscanf(close_paren + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4) return -1;
    info->pid = pid;
    info->ppid = ppid;
    info->pgrp = pgrp;
    info->sid = sid;
    return 0;
}

/* The process, its session, its process group and every descendant of any of them. */
static int collect_tree(pid_t root, pid_t *out, int max) {
    static struct pinfo all[MAX_PROCS * 4];
    int count = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d)) && count < (int)(sizeof all / sizeof all[0])) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 1) continue;
        if (read_stat((pid_t)pid, &all[count]) == 0) count++;
    }
    closedir(d);
    int n = 0;
    out[n++] = root;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < count; i++) {
            int in = 0, parent_in = 0;
            for (int j = 0; j < n; j++) {
                if (out[j] == all[i].pid) in = 1;
                if (out[j] == all[i].ppid) parent_in = 1;
            }
            if (in) continue;
            if (all[i].sid == root || all[i].pgrp == root || parent_in) {
                if (n >= max) return n;
                out[n++] = all[i].pid;
                changed = 1;
            }
        }
    }
    return n;
}

static void kill_tree(pid_t root, int sig) {
    static pid_t tree[MAX_PROCS * 4];
    /* Stop the tree first so nothing forks past the scan, then signal, then let it continue. */
    int rounds = sig == SIGKILL ? 4 : 1;
    for (int r = 0; r < rounds; r++) {
        int n = collect_tree(root, tree, sizeof tree / sizeof tree[0]);
        if (sig == SIGKILL)
            for (int i = 0; i < n; i++) kill(tree[i], SIGSTOP);
        for (int i = 0; i < n; i++) kill(tree[i], sig);
        if (sig != SIGKILL)
            for (int i = 0; i < n; i++) kill(tree[i], SIGCONT);
        if (n <= 1 && r > 0) break;
    }
}

static void handle_kill(int fd, char **fields, int nfields) {
    long pid = 0, sig = SIGKILL;
    int tree = 0;
    for (int i = 0; i < nfields; i++) {
        if (!strncmp(fields[i], "pid=", 4)) pid = strtol(fields[i] + 4, NULL, 10);
        else if (!strncmp(fields[i], "signal=", 7)) sig = strtol(fields[i] + 7, NULL, 10);
        else if (!strcmp(fields[i], "tree=1")) tree = 1;
    }
    if (pid <= 1 || sig < 1 || sig >= NSIG) {
        reply_error(fd, "request", EINVAL, "bad pid or signal");
        return;
    }
    if (tree) kill_tree((pid_t)pid, (int)sig);
    else if (kill((pid_t)pid, (int)sig) != 0) {
        reply_error(fd, "kill", errno, strerror(errno));
        return;
    }
    struct out o = {0};
    out_add(&o, "ok");
    send_frame(fd, &o);
}

/* ---- connections ------------------------------------------------------------------------------- */

static void conn_close(struct conn *c) {
    for (int i = 0; i < MAX_PROCS; i++)
        if (procs[i].pid && procs[i].requester == c->fd) {
            procs[i].requester = -1;
            procs[i].waits = 0;
        }
    close(c->fd);
    free(c->buf);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

/* hostname: see the header. */
static void handle_hostname(int fd, char **fields, int nfields) {
    const char *name = NULL;
    for (int i = 0; i < nfields; i++)
        if (!strncmp(fields[i], "name=", 5)) name = fields[i] + 5;
    if (!name || !*name || strlen(name) > 64) {
        reply_error(fd, "request", EINVAL, "a hostname of 1 to 64 characters is needed");
        return;
    }
    if (sethostname(name, strlen(name)) != 0) {
        reply_error(fd, "hostname", errno, strerror(errno));
        return;
    }
    struct out o = {0};
    out_add(&o, "ok");
    send_frame(fd, &o);
}

/* cpu: see the header. */
static void report_cpu(int fd) {
    char text[32] = {0};
    int file = open("/sys/fs/cgroup/cpuacct/cpuacct.usage", O_RDONLY | O_CLOEXEC);
    ssize_t n = file < 0 ? -1 : read(file, text, sizeof text - 1);
    int err = errno;
    if (file >= 0) close(file);
    char *end = NULL;
    unsigned long long ns = n > 0 ? strtoull(text, &end, 10) : 0;
    if (n <= 0 || end == text) {
        reply_error(fd, "request", n < 0 ? err : EINVAL, "cannot read cpuacct.usage");
        return;
    }
    struct out o = {0};
    out_add(&o, "ok");
    out_add(&o, "ns=%llu", ns);
    send_frame(fd, &o);
}

/* quiesce: see the header. The socket file goes before the connections, so that a host that sees
 * its connection closed knows the file is gone. */
static void quiesce(int fd) {
    struct out o = {0};
    out_add(&o, "ok");
    send_frame(fd, &o);
    if (listen_fd >= 0) close(listen_fd);
    listen_fd = -1;
    unlink(REBIND_PATH); /* one left over would bind the socket again before the checkpoint */
    unlink(SOCKET_PATH);
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i].fd >= 0) conn_close(&conns[i]);
}

static void dispatch(int fd, unsigned char *payload, size_t len) {
    char *fields[8192];
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i < len && n < 8192; i++) {
        if (payload[i] == 0) {
            fields[n++] = (char *)payload + start;
            start = i + 1;
        }
    }
    if (n == 0) {
        reply_error(fd, "request", EINVAL, "empty request");
        return;
    }
    if (!strcmp(fields[0], "spawn")) handle_spawn(fd, fields + 1, n - 1);
    else if (!strcmp(fields[0], "kill")) handle_kill(fd, fields + 1, n - 1);
    else if (!strcmp(fields[0], "stdin")) handle_stdin(fd, fields + 1, n - 1);
    else if (!strcmp(fields[0], "closestdin")) handle_closestdin(fd, fields + 1, n - 1);
    else if (!strcmp(fields[0], "resize")) handle_resize(fd, fields + 1, n - 1);
    else if (!strcmp(fields[0], "quiesce")) quiesce(fd);
    else if (!strcmp(fields[0], "cpu")) report_cpu(fd);
    else if (!strcmp(fields[0], "hostname")) handle_hostname(fd, fields + 1, n - 1);
    else if (!strcmp(fields[0], "ping")) {
        struct out o = {0};
        out_add(&o, "ok");
        out_add(&o, "version=%d", PROTOCOL_VERSION);
        send_frame(fd, &o);
    } else reply_error(fd, "request", EINVAL, "unknown verb");
}

static void conn_readable(struct conn *c) {
    if (c->cap - c->len < 65536) {
        size_t cap = c->cap ? c->cap * 2 : 65536;
        if (cap > MAX_FRAME + 4) cap = MAX_FRAME + 4;
        if (cap <= c->len) {
            conn_close(c);
            return;
        }
        unsigned char *b = realloc(c->buf, cap);
        if (!b) {
            conn_close(c);
            return;
        }
        c->buf = b;
        c->cap = cap;
    }
    ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        conn_close(c);
        return;
    }
    c->len += n;
    while (c->len >= 4) {
        uint32_t flen = c->buf[0] | (c->buf[1] << 8) | (c->buf[2] << 16) | ((uint32_t)c->buf[3] << 24);
        if (flen > MAX_FRAME) {
            conn_close(c);
            return;
        }
        if (c->len < 4 + flen) return;
        int fd = c->fd;
        dispatch(fd, c->buf + 4, flen);
        if (c->fd != fd) return; /* closed meanwhile */
        memmove(c->buf, c->buf + 4 + flen, c->len - 4 - flen);
        c->len -= 4 + flen;
    }
}

static void accept_conn(void) {
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i].fd < 0) {
            conns[i].fd = fd;
            return;
        }
    close(fd);
}

/* ---- start-up and main loop -------------------------------------------------------------------- */

static int setup_socket(void) {
    mkdir(STATE_DIR, 0711);
    mkdir(PROC_DIR, 0711);
    unlink(SOCKET_PATH);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", SOCKET_PATH);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 128) != 0) {
        close(fd);
        return -1;
    }
    chmod(SOCKET_PATH, 0600);
    return fd;
}

/*
 * SIGUSR1: the host gave the sandbox a new root (stasis-reroot.c). The socket is bound again at its
 * path, now in that root, where the host looks for it; the old one, left in the old root, closes.
 */
static void rebind(void) {
    unlink(REBIND_PATH);
    int bound = setup_socket();
    if (bound < 0) {
        log_line("binding the socket again: %s", strerror(errno));
        return;
    }
    if (listen_fd >= 0) close(listen_fd);
    listen_fd = bound;
}

static void begin_shutdown(void) {
    if (shutting_down) return;
    shutting_down = 1;
    shutdown_deadline = time(NULL) + SHUTDOWN_GRACE_SECONDS;
    kill(-1, SIGTERM);
}

static int any_children(void) {
    return waitid(P_ALL, 0, NULL, WEXITED | WNOHANG | WNOWAIT) == 0 || errno != ECHILD;
}

int main(void) {
    umask(022);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGUSR1);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    for (int i = 0; i < MAX_CONNS; i++) conns[i].fd = -1;
    for (int i = 0; i < MAX_PROCS; i++) proc_reset(&procs[i]);
    listen_fd = setup_socket();
    if (listen_fd < 0 || signal_fd < 0) {
        log_line("start-up failed: %s", strerror(errno));
        return 1;
    }

    static struct pollfd pfds[2 + MAX_CONNS + MAX_PROCS];
    static struct proc *pfd_proc[2 + MAX_CONNS + MAX_PROCS];
    static struct conn *pfd_conn[2 + MAX_CONNS + MAX_PROCS];
    for (;;) {
        int n = 0;
        pfds[n++] = (struct pollfd){.fd = signal_fd, .events = POLLIN};
        pfds[n++] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
        int first_proc = n;
        for (int i = 0; i < MAX_PROCS; i++)
            if (procs[i].pid && procs[i].status_fd >= 0) {
                pfd_proc[n] = &procs[i];
                pfds[n++] = (struct pollfd){.fd = procs[i].status_fd, .events = POLLIN};
            }
        int first_conn = n;
        for (int i = 0; i < MAX_CONNS; i++)
            if (conns[i].fd >= 0) {
                pfd_conn[n] = &conns[i];
                pfds[n++] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
            }
        int timeout = report_overdue_exits();
        if (shutting_down && (timeout < 0 || timeout > 100)) timeout = 100;
        if (listen_fd < 0) {
            if (access(REBIND_PATH, F_OK) == 0) {
                rebind();
                continue;
            }
            if (timeout < 0 || timeout > REBIND_POLL_MS) timeout = REBIND_POLL_MS;
        }
        int ready = poll(pfds, n, timeout);
        if (ready < 0 && errno != EINTR) {
            log_line("poll: %s", strerror(errno));
            continue;
        }
        /* Exec results first: a process's start is reported before its exit. */
        for (int i = first_proc; i < first_conn; i++)
            if (pfds[i].revents) finish_start(pfd_proc[i]);
        if (pfds[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(signal_fd, &si, sizeof si) == sizeof si)
                if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP) begin_shutdown();
                else if (si.ssi_signo == SIGUSR1) rebind();
            reap();
        }
        if (pfds[1].revents & POLLIN) accept_conn();
        for (int i = first_conn; i < n; i++)
            if (pfds[i].revents && pfd_conn[i]->fd == pfds[i].fd) conn_readable(pfd_conn[i]);
        if (shutting_down) {
            reap();
            if (!any_children()) return 0;
            if (time(NULL) >= shutdown_deadline) {
                kill(-1, SIGKILL);
                shutdown_deadline = time(NULL) + 5;
            }
        }
    }
}
