/*
 * stasis-pin: runs a program whose HTTP(S) connections may reach one endpoint only, at the
 * addresses the service checked when it resolved the endpoint's name: the bucket daemons' proxy.
 *
 *   stasis-pin HOST PORT ADDRESS[,ADDRESS...] /PROGRAM [ARGS...]
 *
 * It listens on a port of 127.0.0.1 chosen by the kernel, points the program at it as its
 * SOCKS5 proxy (HTTP_PROXY and HTTPS_PROXY, which Go's HTTP client, rclone's, honours for http
 * and https alike, sending the name unresolved), and serves that proxy: a CONNECT to HOST:PORT,
 * or to one of the ADDRESSES at PORT, goes to the first ADDRESS that answers; anything else is
 * refused (reply 2, "not allowed by ruleset") with a line on stderr. The program never resolves
 * the endpoint's name itself, so what the name resolves to later (DNS rebinding) cannot send its
 * connections anywhere the service did not check.
 *
 * Lifetime: the program runs as this process's child, and dies with it (PR_SET_PDEATHSIG): a
 * killed pin leaves no daemon that connects unchecked. SIGTERM, SIGINT and SIGHUP are passed on to
 * the program; this process exits with the program's status (128 + the signal if a signal ended
 * it) as soon as it ends. Each proxied connection is a child process of its own, ended with this one.
 * Only the program keeps the working directory this process was started in; this one moves to /.
 *
 * With STASIS_PIN_CGROUP set (a cgroup's cgroup.procs file), it first moves itself there, so the
 * program and every connection count against that cgroup's limits; the variable is not passed on.
 *
 * Exit status 127 with one line on stderr if the program cannot run, the proxy cannot listen or
 * the cgroup cannot be joined.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ADDRESSES 16
#define HANDSHAKE_TIMEOUT_SECONDS 30

static const char *pinned_host;
static unsigned pinned_port;
static struct sockaddr_storage pinned[MAX_ADDRESSES];
static socklen_t pinned_len[MAX_ADDRESSES];
static int pinned_count;

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "stasis-pin: %s %s: %s\n", what, detail, strerror(errno));
    return 127;
}

static int status_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 127;
}

/* Parses ADDRESS[,ADDRESS...] into pinned[]; 0 if one is not an IPv4 or IPv6 address. */
static int parse_addresses(char *list) {
    for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
        if (pinned_count == MAX_ADDRESSES) return 0;
        struct sockaddr_storage *s = &pinned[pinned_count];
        memset(s, 0, sizeof *s);
        struct sockaddr_in *v4 = (struct sockaddr_in *)s;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)s;
        if (inet_pton(AF_INET, item, &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(pinned_port);
            pinned_len[pinned_count++] = sizeof *v4;
        } else if (inet_pton(AF_INET6, item, &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(pinned_port);
            pinned_len[pinned_count++] = sizeof *v6;
        } else {
            return 0;
        }
    }
    return pinned_count > 0;
}

static int read_fully(int fd, void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t n = read(fd, (char *)buffer + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        done += (size_t)n;
    }
    return 1;
}

static int write_fully(int fd, const void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(fd, (const char *)buffer + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        done += (size_t)n;
    }
    return 1;
}

static void reply(int client, unsigned char code) {
    unsigned char answer[10] = {5, code, 0, 1, 0, 0, 0, 0, 0, 0}; /* bound to 0.0.0.0:0: the client does not use it */
    write_fully(client, answer, sizeof answer);
}

/* Whether an address literal the client sent is one of the pinned ones. */
static int is_pinned(int family, const unsigned char *address) {
    for (int i = 0; i < pinned_count; i++) {
        if (pinned[i].ss_family != family) continue;
        const void *own = family == AF_INET ? (const void *)&((struct sockaddr_in *)&pinned[i])->sin_addr
                                            : (const void *)&((struct sockaddr_in6 *)&pinned[i])->sin6_addr;
        if (memcmp(own, address, family == AF_INET ? 4 : 16) == 0) return 1;
    }
    return 0;
}

/* Copies bytes both ways until both sides have finished sending. */
static void relay(int a, int b) {
    char buffer[65536];
    int open_a = 1, open_b = 1;
    while (open_a || open_b) {
        struct pollfd fds[2] = {{a, open_a ? POLLIN : 0, 0}, {b, open_b ? POLLIN : 0, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        for (int i = 0; i < 2; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            int from = i == 0 ? a : b, to = i == 0 ? b : a;
            ssize_t n = read(from, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                if (n < 0) return; /* a reset: nothing more to pass on either way */
                shutdown(to, SHUT_WR);
                if (i == 0) open_a = 0; else open_b = 0;
            } else if (!write_fully(to, buffer, (size_t)n)) {
                return;
            }
        }
    }
}

/* One client: the SOCKS5 handshake (no authentication, CONNECT only), the check, the relay. */
static void serve(int client) {
    struct timeval timeout = {HANDSHAKE_TIMEOUT_SECONDS, 0};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    unsigned char head[2], methods[255];
    if (!read_fully(client, head, 2) || head[0] != 5 || !read_fully(client, methods, head[1])) return;
    unsigned char none = 0xff;
    for (int i = 0; i < head[1]; i++)
        if (methods[i] == 0) none = 0;
    unsigned char chosen[2] = {5, none};
    if (!write_fully(client, chosen, 2) || none != 0) return;

    unsigned char request[4];
    if (!read_fully(client, request, 4) || request[0] != 5) return;
    char name[256] = "";
    unsigned char address[16];
    int family = 0, allowed = 0;
    if (request[3] == 1 || request[3] == 4) {
        family = request[3] == 1 ? AF_INET : AF_INET6;
        if (!read_fully(client, address, family == AF_INET ? 4 : 16)) return;
        inet_ntop(family, address, name, sizeof name);
    } else if (request[3] == 3) {
        unsigned char length;
        if (!read_fully(client, &length, 1) || !read_fully(client, name, length)) return;
        name[length] = 0;
    } else {
        reply(client, 8); /* address type not supported */
        return;
    }
    unsigned char port_bytes[2];
    if (!read_fully(client, port_bytes, 2)) return;
    unsigned port = (unsigned)port_bytes[0] << 8 | port_bytes[1];
    if (request[1] != 1) {
        reply(client, 7); /* command not supported */
        return;
    }
    if (port == pinned_port) allowed = family ? is_pinned(family, address) : strcasecmp(name, pinned_host) == 0;
    if (!allowed) {
        fprintf(stderr, "stasis-pin: refused a connection to %s:%u: only %s:%u is reachable\n", name, port, pinned_host, pinned_port);
        reply(client, 2);
        return;
    }
    int upstream = -1, last_errno = 0;
    for (int i = 0; i < pinned_count && upstream < 0; i++) {
        upstream = socket(pinned[i].ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (upstream < 0) continue;
        if (connect(upstream, (struct sockaddr *)&pinned[i], pinned_len[i]) != 0) {
            last_errno = errno;
            close(upstream);
            upstream = -1;
        }
    }
    if (upstream < 0) {
        reply(client, last_errno == ECONNREFUSED ? 5 : last_errno == ENETUNREACH ? 3 : 4);
        return;
    }
    struct timeval none_timeout = {0, 0};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &none_timeout, sizeof none_timeout);
    reply(client, 0);
    relay(client, upstream);
}

int main(int argc, char **argv) {
    if (argc < 5 || argv[4][0] != '/') {
        fprintf(stderr, "usage: stasis-pin HOST PORT ADDRESS[,ADDRESS...] /PROGRAM [ARGS...]\n");
        return 2;
    }
    pinned_host = argv[1];
    char *end;
    unsigned long port = strtoul(argv[2], &end, 10);
    if (*end || port == 0 || port > 65535) {
        fprintf(stderr, "stasis-pin: '%s' is not a port\n", argv[2]);
        return 2;
    }
    pinned_port = (unsigned)port;
    if (!parse_addresses(argv[3])) {
        fprintf(stderr, "stasis-pin: '%s' is not a list of at most %d IP addresses\n", argv[3], MAX_ADDRESSES);
        return 2;
    }

    const char *cgroup = getenv("STASIS_PIN_CGROUP");
    if (cgroup) {
        FILE *procs = fopen(cgroup, "w");
        if (!procs || fputs("0\n", procs) == EOF || fclose(procs) == EOF) return fail("joining the cgroup", cgroup);
        unsetenv("STASIS_PIN_CGROUP");
    }

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t local_length = sizeof local;
    if (listener < 0 || bind(listener, (struct sockaddr *)&local, sizeof local) != 0 || listen(listener, 64) != 0
        || getsockname(listener, (struct sockaddr *)&local, &local_length) != 0)
        return fail("listening on", "127.0.0.1");
    char proxy[64];
    snprintf(proxy, sizeof proxy, "socks5://127.0.0.1:%u", ntohs(local.sin_port));
    const char *names[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) setenv(names[i], proxy, 1);
    unsetenv("NO_PROXY");
    unsetenv("no_proxy");
    unsetenv("ALL_PROXY");
    unsetenv("all_proxy");

    sigset_t handled;
    sigemptyset(&handled);
    int forwarded[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaddset(&handled, forwarded[i]);
    sigaddset(&handled, SIGCHLD);
    sigset_t original;
    if (sigprocmask(SIG_BLOCK, &handled, &original) != 0) return fail("blocking", "signals");
    int signals = signalfd(-1, &handled, SFD_CLOEXEC);
    if (signals < 0) return fail("making", "a signalfd");

    pid_t self = getpid();
    pid_t program = fork();
    if (program < 0) return fail("starting", argv[4]);
    if (program == 0) {
        sigprocmask(SIG_SETMASK, &original, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != self) _exit(127);
        execv(argv[4], argv + 4);
        _exit(fail("running", argv[4]));
    }
    /* the program alone keeps the working directory it was given: that is how the service finds a daemon again */
    if (chdir("/") != 0) return fail("leaving", "the working directory");

    for (;;) {
        struct pollfd fds[2] = {{signals, POLLIN, 0}, {listener, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return fail("waiting", "for connections");
        }
        if (fds[0].revents & POLLIN) {
            struct signalfd_siginfo info;
            if (read(signals, &info, sizeof info) == (ssize_t)sizeof info && info.ssi_signo != SIGCHLD) kill(program, (int)info.ssi_signo);
            int status;
            pid_t ended;
            while ((ended = waitpid(-1, &status, WNOHANG)) > 0)
                if (ended == program) return status_code(status);
        }
        if (fds[1].revents & POLLIN) {
            int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
            if (client < 0) continue;
            pid_t handler = fork();
            if (handler == 0) {
                sigprocmask(SIG_SETMASK, &original, NULL);
                prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                if (getppid() != self) _exit(0);
                close(listener);
                close(signals);
                serve(client);
                _exit(0);
            }
            close(client);
        }
    }
}
