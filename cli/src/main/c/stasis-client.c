/*
 * stasis-client: runs one `stasis` CLI command in the CLI daemon, a JVM kept warm between calls
 * (io.stasis.cli.CliDaemon), so that a command answers in milliseconds instead of paying for a
 * JVM's start. It relays the command's stdin, stdout, stderr and exit code over a unix socket.
 *
 *   stasis-client SOCKET JAVA-COMMAND... --args CLI-ARGS...
 *   stasis-client --stop SOCKET
 *
 * JAVA-COMMAND is how the launcher would run the CLI in a fresh JVM (java [options] -jar
 * stasis-cli.jar). When no daemon answers on SOCKET, the client starts one in the background
 * (JAVA-COMMAND --cli-daemon SOCKET, in a session of its own, with its output in SOCKET.log) and
 * runs this command in a fresh JVM itself (exec JAVA-COMMAND CLI-ARGS), so no call waits for a
 * daemon to start. The daemon may also answer "run it yourself" (commands that need this
 * process's terminal, files or signals: shell, exec -t/-i, cp, mcp): the same exec then.
 * --stop asks the daemon on SOCKET to exit (the launcher does so after it rebuilt the CLI).
 *
 * Wire protocol (all integers big-endian u32):
 *   client -> daemon: "STASIS-CLI 1\n", flags (bit 0/1/2: fd 0/1/2 is a terminal; bit 3: stop),
 *                     argc and each argument, the working directory, envc and each "K=V",
 *                     every one as a length and its bytes; then frames TYPE LEN DATA:
 *                     'I' stdin bytes, 'E' end of stdin, 'S' a signal (DATA: its number, 1 byte).
 *   daemon -> client: frames 'A' accepted (it runs the command; sent before anything else),
 *                     'O' stdout bytes, 'R' stderr bytes, 'W' wants at most DATA (u32) bytes of
 *                     stdin, 'X' the exit code (DATA: u32), 'L' run it yourself (before any output).
 * A connection that ends before 'A' ran nothing (a daemon stopping as we came): the client then
 * runs the command itself. One that ends after 'A' is an error: the command may have done its work.
 * On SIGINT, SIGTERM or SIGHUP the client tells the daemon (which stops the command) and exits as
 * if killed by the signal, as a JVM would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t caught_signal;

static void on_signal(int sig) { caught_signal = sig; }

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len) {
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0) {
            if (errno == EINTR && !caught_signal) continue;
            return -1;
        }
        if (n == 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A growing buffer for the request header. */
struct buf {
    char *data;
    size_t len, cap;
};

static void put(struct buf *b, const void *data, size_t len) {
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len) cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data) {
            perror("stasis-client: realloc");
            exit(1);
        }
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

static void put_u32(struct buf *b, uint32_t v) {
    unsigned char be[4] = {v >> 24, v >> 16, v >> 8, v};
    put(b, be, 4);
}

static void put_str(struct buf *b, const char *s) {
    size_t len = strlen(s);
    put_u32(b, (uint32_t)len);
    put(b, s, len);
}

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int send_frame(int sock, char type, const void *data, uint32_t len) {
    unsigned char head[5] = {(unsigned char)type, len >> 24, len >> 16, len >> 8, len};
    if (write_all(sock, head, 5) < 0) return -1;
    return len ? write_all(sock, data, len) : 0;
}

static int connect_to(const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) return -1;
    strcpy(addr.sun_path, path);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return -1;
    if (connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) {
        close(sock);
        return -1;
    }
    return sock;
}

/* JAVA-COMMAND --cli-daemon SOCKET, detached: its own session, stdin from /dev/null, output in
 * SOCKET.log. Double fork, so that it is not our child and we need not reap it. */
static void start_daemon(char **java, int javac, const char *socket_path) {
    pid_t pid = fork();
    if (pid < 0) return;
    if (pid > 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        return;
    }
    if (setsid() < 0 || fork() != 0) _exit(0);
    char log[4096];
    snprintf(log, sizeof log, "%s.log", socket_path);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || out < 0) _exit(1);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    char **argv = calloc((size_t)javac + 3, sizeof *argv);
    if (!argv) _exit(1);
    for (int i = 0; i < javac; i++) argv[i] = java[i];
    argv[javac] = "--cli-daemon";
    argv[javac + 1] = (char *)socket_path;
    execvp(argv[0], argv);
    _exit(127);
}

/* exec JAVA-COMMAND CLI-ARGS: this call in a fresh JVM. */
static void run_locally(char **java, int javac, char **args, int argc) {
    char **argv = calloc((size_t)javac + (size_t)argc + 1, sizeof *argv);
    if (!argv) {
        perror("stasis-client: calloc");
        exit(1);
    }
    for (int i = 0; i < javac; i++) argv[i] = java[i];
    for (int i = 0; i < argc; i++) argv[javac + i] = args[i];
    execvp(argv[0], argv);
    fprintf(stderr, "stasis-client: cannot run %s: %s\n", argv[0], strerror(errno));
    exit(127);
}

static int send_request(int sock, uint32_t flags, char **args, int argc) {
    struct buf b = {0};
    const char *magic = "STASIS-CLI 1\n";
    put(&b, magic, strlen(magic));
    put_u32(&b, flags);
    put_u32(&b, (uint32_t)argc);
    for (int i = 0; i < argc; i++) put_str(&b, args[i]);
    char *cwd = getcwd(NULL, 0);
    put_str(&b, cwd ? cwd : "/");
    free(cwd);
    uint32_t envc = 0;
    for (char **e = environ; *e; e++) envc++;
    put_u32(&b, envc);
    for (char **e = environ; *e; e++) put_str(&b, *e);
    int rc = write_all(sock, b.data, b.len);
    free(b.data);
    return rc;
}

/* Relays frames until the exit frame; returns the exit code, or -1 when the command is to run
 * here: the daemon said so, or it went away before it accepted the command. */
static int relay(int sock) {
    static unsigned char data[65536];
    uint32_t wanted = 0;
    int stdin_open = 1, accepted = 0, printed = 0;
    for (;;) {
        if (caught_signal) {
            unsigned char sig = (unsigned char)caught_signal;
            send_frame(sock, 'S', &sig, 1);
            return 128 + caught_signal;
        }
        struct pollfd fds[2] = {{.fd = sock, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        int nfds = wanted > 0 && stdin_open ? 2 : 1;
        if (poll(fds, (nfds_t)nfds, -1) < 0) {
            if (errno == EINTR) continue;
            perror("stasis-client: poll");
            return 1;
        }
        if (nfds == 2 && fds[1].revents) {
            size_t max = wanted < sizeof data ? wanted : sizeof data;
            ssize_t n = read(0, data, max);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                stdin_open = 0;
                if (send_frame(sock, 'E', NULL, 0) < 0) return 1;
            } else if (send_frame(sock, 'I', data, (uint32_t)n) < 0) {
                return 1;
            }
            wanted = 0;
            continue;
        }
        if (!fds[0].revents) continue;
        unsigned char head[5];
        if (read_all(sock, head, 5) < 0) {
            if (caught_signal) continue;
            if (!accepted) return -1;
            fprintf(stderr, "stasis-client: the CLI daemon went away while it ran the command\n");
            return 1;
        }
        uint32_t len = get_u32(head + 1);
        if (len > sizeof data) {
            fprintf(stderr, "stasis-client: a frame of %u bytes is too large\n", len);
            return 1;
        }
        if (len && read_all(sock, data, len) < 0) {
            if (caught_signal) continue;
            fprintf(stderr, "stasis-client: the CLI daemon went away\n");
            return 1;
        }
        switch (head[0]) {
        case 'A':
            accepted = 1;
            break;
        case 'O':
            printed = 1;
            if (write_all(1, data, len) < 0) return 141; /* stdout closed: as SIGPIPE would end a JVM */
            break;
        case 'R':
            printed = 1;
            write_all(2, data, len);
            break;
        case 'W':
            if (len == 4) wanted = get_u32(data);
            if (!stdin_open && send_frame(sock, 'E', NULL, 0) < 0) return 1;
            break;
        case 'X':
            return len == 4 ? (int)(get_u32(data) & 0xff) : 1;
        case 'L':
            if (!printed) return -1;
            fprintf(stderr, "stasis-client: the CLI daemon asked to run the command here after it printed\n");
            return 1;
        default:
            fprintf(stderr, "stasis-client: unknown frame '%c' from the CLI daemon\n", head[0]);
            return 1;
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--stop") == 0) {
        int sock = connect_to(argv[2]);
        if (sock < 0) return 0; /* none runs */
        char *none[1] = {NULL};
        send_request(sock, 1u << 3, none, 0);
        char c;
        while (read(sock, &c, 1) > 0) {} /* until it has closed: then it is stopping */
        return 0;
    }
    int split = -1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--args") == 0) {
            split = i;
            break;
        }
    }
    if (argc < 3 || split < 3) {
        fprintf(stderr, "usage: stasis-client SOCKET JAVA-COMMAND... --args CLI-ARGS...\n"
                        "       stasis-client --stop SOCKET\n");
        return 2;
    }
    const char *socket_path = argv[1];
    char **java = argv + 2, **args = argv + split + 1;
    int javac = split - 2, cli_argc = argc - split - 1;

    int sock = connect_to(socket_path);
    if (sock < 0) {
        start_daemon(java, javac, socket_path);
        run_locally(java, javac, args, cli_argc);
    }
    uint32_t flags = (isatty(0) ? 1u : 0) | (isatty(1) ? 2u : 0) | (isatty(2) ? 4u : 0);
    if (send_request(sock, flags, args, cli_argc) < 0) {
        close(sock);
        run_locally(java, javac, args, cli_argc);
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int code = relay(sock);
    close(sock);
    if (code == -1) {
        signal(SIGPIPE, SIG_DFL);
        run_locally(java, javac, args, cli_argc);
    }
    if (code > 128 && code < 128 + 65 && caught_signal == code - 128) {
        signal(caught_signal, SIG_DFL);
        raise(caught_signal);
    }
    return code;
}
