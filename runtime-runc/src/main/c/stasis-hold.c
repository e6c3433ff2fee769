/*
 * stasis-hold: stops the tasks of a gVisor sandbox, or runs them again, through its sentry's
 * control server, and records it in a marker file once the sentry has done it.
 *
 *   stasis-hold pause SOCKET MARKER    the tasks stop; then MARKER is created
 *   stasis-hold resume SOCKET MARKER   the tasks run; then MARKER is removed
 *
 * Why: `runsc pause` and `runsc resume` make the same call on the same socket after ~45 ms of
 * starting runsc; this takes ~1 ms. The marker is to the service what runsc's state file ("paused")
 * is to runsc: how it tells a sandbox whose tasks are held, also after it was killed. This process
 * writes it, not the service, so a service killed during the call finds it as the sentry left
 * things. The sentry counts its pauses, and a resume with no pause to match ends the sandbox: the
 * marker says whether a resume is due.
 *
 * The control server speaks gVisor's urpc: one JSON object each way on a stream socket, the call
 * {"method": M, "arg": null} and the answer {"success": B, "err": "...", "result": ...}.
 *
 * Exit status 0 once the sentry has done it and the marker says so; 1 with one line on stderr
 * when the sentry refused, could not be reached or did not answer within 30 s, or the marker could
 * not be created (the tasks are resumed then); 2 for a bad call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define ANSWER_MAX 65536

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "stasis-hold: %s %s: %s\n", what, detail, strerror(errno));
    return 1;
}

/* Whether buf[0..len) holds one whole JSON object: its braces balanced, strings skipped. */
static int whole_object(const char *buf, size_t len) {
    int depth = 0, in_string = 0, escaped = 0, started = 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_string) {
            if (escaped) escaped = 0;
            else if (c == '\\') escaped = 1;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{') {
            depth++;
            started = 1;
        } else if (c == '}') {
            depth--;
            if (started && depth == 0) return 1;
        }
    }
    return 0;
}

/* Calls METHOD on the control server at SOCKET; 0 once it answered with success. */
static int call(const char *socket_path, const char *method) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return fail("reaching", socket_path);
    }
    strcpy(address.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail("making", "a socket");
    struct timeval timeout = {.tv_sec = 30};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0
        || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0)
        return fail("setting the timeouts of", socket_path);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) return fail("connecting to", socket_path);
    char request[128];
    int length = snprintf(request, sizeof request, "{\"method\":\"%s\",\"arg\":null}", method);
    if (length <= 0 || (size_t)length >= sizeof request) {
        errno = EINVAL;
        return fail("asking for", method);
    }
    for (int sent = 0; sent < length;) {
        ssize_t n = send(fd, request + sent, length - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("asking for", method);
        sent += n;
    }
    static char answer[ANSWER_MAX + 1];
    size_t received = 0;
    while (!whole_object(answer, received)) {
        if (received == ANSWER_MAX) {
            errno = EMSGSIZE;
            return fail("reading the answer to", method);
        }
        ssize_t n = recv(fd, answer + received, ANSWER_MAX - received, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail("reading the answer to", method);
        if (n == 0) {
            errno = ECONNRESET;
            return fail("reading the answer to", method);
        }
        received += n;
    }
    close(fd);
    answer[received] = '\0';
    if (strstr(answer, "\"success\":true") == NULL) {
        fprintf(stderr, "stasis-hold: the sentry refused %s: %s\n", method, answer);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    int pause;
    if (argc == 4 && strcmp(argv[1], "pause") == 0) pause = 1;
    else if (argc == 4 && strcmp(argv[1], "resume") == 0) pause = 0;
    else {
        fprintf(stderr, "usage: stasis-hold pause|resume SOCKET MARKER\n");
        return 2;
    }
    const char *socket_path = argv[2], *marker = argv[3];
    if (call(socket_path, pause ? "containerManager.Pause" : "containerManager.Resume") != 0) return 1;
    if (pause) {
        int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            int code = fail("creating", marker);
            call(socket_path, "containerManager.Resume"); /* no tasks held that the marker does not tell */
            return code;
        }
        close(fd);
    } else if (unlink(marker) != 0 && errno != ENOENT) {
        return fail("removing", marker);
    }
    return 0;
}
