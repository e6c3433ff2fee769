/*
 * stasis-sentry: a client of a gVisor sandbox's control server (its sentry's): stops its tasks or
 * runs them again, recording that in a marker file once the sentry has done it, and saves it.
 *
 *   stasis-sentry pause SOCKET MARKER           MARKER is created, and the tasks stop
 *   stasis-sentry resume SOCKET MARKER          MARKER is removed, and the tasks run
 *   stasis-sentry save SOCKET DIR resume|stop   the sandbox is saved into DIR; then it runs on
 *                                               (resume) or ends (stop)
 *
 * Why: `runsc pause`, `runsc resume` and `runsc checkpoint` make the same calls on the same socket
 * after ~45 ms of starting runsc; this starts in ~1 ms, and the service keeps one started ahead,
 * waiting for its arguments on stdin (stasis-ahead.h), which saves the JDK's start of it too.
 * The marker is to the service what runsc's state file ("paused") is to runsc: how it tells a
 * sandbox whose tasks are held, also after it was killed. This process writes it, not the
 * service, so a service killed during the call finds it as the sentry left things. The sentry
 * counts its pauses, and a resume with no pause to match ends the sandbox: the marker says
 * whether a resume is due.
 *
 * The marker changes as soon as the whole call is sent, before the answer: the sentry carries out
 * a call it has received whether or not its caller still waits (gVisor's urpc reads a call, runs
 * it, then writes the answer), so from then on the tasks are held, or run, as the call says. A
 * process killed while it waits for the answer, or one that gives up on a sentry slow to stop its
 * tasks, leaves the marker right; only the microseconds between the send and the marker's change
 * are open to a kill. (Changed after the answer, a kill in the wait or a late pause left tasks
 * held with no marker, which no resume would end; or a marker with the tasks running, whose resume
 * would end the sandbox.)
 *
 * A save is what `runsc checkpoint --compression=none` asks for: the image's three files made in
 * DIR (the state, then the pages' metadata and the pages, which a restore maps as they are) and
 * passed to the sentry with the call, which writes them. The sentry saves on if this process ends
 * meanwhile, as it does when runsc's does; its log says how the save ended.
 *
 * The control server speaks gVisor's urpc: one JSON object each way on a stream socket, the call
 * {"method": M, "arg": A} (any files as SCM_RIGHTS with its first bytes) and the answer
 * {"success": B, "err": "...", "result": ...}.
 *
 * Exit status 0 once the sentry has done it (and the marker says so); 1 with one line on stderr
 * when the sentry could not be reached (the marker is as it was), did not answer (a pause or resume
 * within 30 s: the marker says what the call asked), refused (a pause's marker is removed again; a
 * resume's stays removed, as its sentry runs the tasks before anything that can fail), the marker
 * could not be changed (a pause is undone then) or the image's files could not be made; 2 for a
 * bad call.
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

#include "stasis-ahead.h"

#define ANSWER_MAX 65536
#define IMAGE_FILES 3

/* The image's files, in the order the sentry takes them (runsc/boot: the state, the pages' metadata, the pages). */
static const char *const IMAGE_FILE_NAMES[IMAGE_FILES] = {"checkpoint.img", "pages_meta.img", "pages.img"};

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "stasis-sentry: %s %s: %s\n", what, detail, strerror(errno));
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

/* Sends request on fd, files (if any) with its first bytes; 0 once all of it is sent. */
static int send_request(int fd, const char *request, size_t length, const int *files, int file_count, const char *method) {
    union {
        char buffer[CMSG_SPACE(sizeof(int) * IMAGE_FILES)];
        struct cmsghdr align;
    } control;
    for (size_t sent = 0; sent < length;) {
        struct iovec piece = {.iov_base = (char *)request + sent, .iov_len = length - sent};
        struct msghdr message = {.msg_iov = &piece, .msg_iovlen = 1};
        if (sent == 0 && file_count > 0) {
            memset(&control, 0, sizeof control);
            message.msg_control = control.buffer;
            message.msg_controllen = CMSG_SPACE(sizeof(int) * file_count);
            struct cmsghdr *header = CMSG_FIRSTHDR(&message);
            header->cmsg_level = SOL_SOCKET;
            header->cmsg_type = SCM_RIGHTS;
            header->cmsg_len = CMSG_LEN(sizeof(int) * file_count);
            memcpy(CMSG_DATA(header), files, sizeof(int) * file_count);
        }
        ssize_t n = sendmsg(fd, &message, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("asking for", method);
        sent += n;
    }
    return 0;
}

/* What became of a call: answered with success, refused by the sentry, or neither (not sent, or no answer). */
enum outcome { DONE, REFUSED, UNANSWERED };

/*
 * Sends method with arg (JSON) and files to the control server at socket_path; returns the
 * connection, to read the answer from (call_answer), once all of the call is sent, or -1 with one
 * line on stderr. wait_seconds bounds the wait for the answer (0: none).
 */
static int call_send(const char *socket_path, const char *method, const char *arg, const int *files, int file_count, int wait_seconds) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        fail("reaching", socket_path);
        return -1;
    }
    strcpy(address.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail("making", "a socket");
        return -1;
    }
    struct timeval timeout = {.tv_sec = wait_seconds};
    struct timeval send_timeout = {.tv_sec = 30};
    const char *failed_step = NULL;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0
        || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout) != 0)
        failed_step = "setting the timeouts of";
    else if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0)
        failed_step = "connecting to";
    if (failed_step != NULL) {
        fail(failed_step, socket_path);
        close(fd);
        return -1;
    }
    char request[512];
    int length = snprintf(request, sizeof request, "{\"method\":\"%s\",\"arg\":%s}", method, arg);
    if (length <= 0 || (size_t)length >= sizeof request) {
        errno = EINVAL;
        fail("asking for", method);
        close(fd);
        return -1;
    }
    if (send_request(fd, request, length, files, file_count, method) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads the answer to method on fd (from call_send) and closes it; a refusal or no answer is told on stderr. */
static enum outcome call_answer(int fd, const char *method) {
    static char answer[ANSWER_MAX + 1];
    size_t received = 0;
    while (!whole_object(answer, received)) {
        ssize_t n = -1;
        if (received == ANSWER_MAX) errno = EMSGSIZE;
        else if ((n = recv(fd, answer + received, ANSWER_MAX - received, 0)) < 0 && errno == EINTR) continue;
        else if (n == 0) errno = ECONNRESET;
        if (n <= 0) {
            fail("reading the answer to", method);
            close(fd);
            return UNANSWERED;
        }
        received += n;
    }
    close(fd);
    answer[received] = '\0';
    if (strstr(answer, "\"success\":true") == NULL) {
        fprintf(stderr, "stasis-sentry: the sentry refused %s: %s\n", method, answer);
        return REFUSED;
    }
    return DONE;
}

/* call_send, then call_answer: 0 once the sentry answered with success. */
static int call(const char *socket_path, const char *method, const char *arg, const int *files, int file_count, int wait_seconds) {
    int fd = call_send(socket_path, method, arg, files, file_count, wait_seconds);
    return fd < 0 || call_answer(fd, method) != DONE;
}

static int hold(const char *socket_path, const char *marker) {
    int call_fd = call_send(socket_path, "containerManager.Pause", "null", NULL, 0, 30);
    if (call_fd < 0) return 1;
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int code = fail("creating", marker);
        /* no tasks held that the marker does not tell: unless it refused, the sentry has paused them or is at it */
        if (call_answer(call_fd, "containerManager.Pause") != REFUSED) call(socket_path, "containerManager.Resume", "null", NULL, 0, 30);
        return code;
    }
    close(fd);
    switch (call_answer(call_fd, "containerManager.Pause")) {
        case DONE:
            return 0;
        case REFUSED:
            if (unlink(marker) != 0) return fail("removing", marker);
            return 1;
        default:
            fprintf(stderr, "stasis-sentry: the sentry has the pause: the tasks count as held (%s)\n", marker);
            return 1;
    }
}

static int release(const char *socket_path, const char *marker) {
    int call_fd = call_send(socket_path, "containerManager.Resume", "null", NULL, 0, 30);
    if (call_fd < 0) return 1;
    int removed = unlink(marker) == 0 || errno == ENOENT;
    int code = removed ? 0 : fail("removing", marker);
    if (call_answer(call_fd, "containerManager.Resume") != DONE) return 1;
    return code;
}

static int save(const char *socket_path, const char *dir, int resume) {
    int directory = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (directory < 0) return fail("opening", dir);
    int files[IMAGE_FILES];
    for (int i = 0; i < IMAGE_FILES; i++) {
        files[i] = openat(directory, IMAGE_FILE_NAMES[i], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (files[i] < 0) return fail("creating the image file", IMAGE_FILE_NAMES[i]);
    }
    /* runsc's own: its compression in the image's metadata, and whether the sandbox goes on. */
    char arg[256];
    snprintf(arg, sizeof arg,
             "{\"key\":null,\"metadata\":{\"compression\":\"none\"},\"MemoryFileSaveOpts\":{\"ExcludeCommittedZeroPages\":false},"
             "\"have_pages_file\":true,\"Resume\":%s}",
             resume ? "true" : "false");
    return call(socket_path, "containerManager.Checkpoint", arg, files, IMAGE_FILES, 0);
}

int main(int argc, char **argv) {
    ahead_take_arguments(argc, argv);
    if (argc == 4 && strcmp(argv[1], "pause") == 0) return hold(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "resume") == 0) return release(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "save") == 0 && (strcmp(argv[4], "resume") == 0 || strcmp(argv[4], "stop") == 0))
        return save(argv[2], argv[3], strcmp(argv[4], "resume") == 0);
    fprintf(stderr, "usage: stasis-sentry pause|resume SOCKET MARKER | save SOCKET DIR resume|stop\n");
    return 2;
}
