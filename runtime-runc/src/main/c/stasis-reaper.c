/*
 * stasis-reaper: runs a program that leaves processes behind (runsc run --detach, runsc restore
 * --detach: the sentry and the gofer outlive the runsc that started them) and stays as their
 * parent, reaping each as it ends, until none is left: the shim of a gVisor sandbox.
 *
 *   stasis-reaper PROGRAM [ARGS...]
 *
 * Why: an orphan becomes the child of the nearest subreaper, else of process 1, and runsc delete
 * waits until its sentry is reaped. Where process 1 reaps late (this host's reaps every ~2 s), a
 * delete took ~1.9 s, and with it the resume that follows a hibernate; under a reaper of its own
 * it takes the sentry's exit. The service itself cannot be the subreaper: the JVM waits for its
 * own children by pid, and a reaper in it would take their statuses.
 *
 * The caller sees PROGRAM's run: this process exits with PROGRAM's status (128 + the signal if a
 * signal ended it) as soon as PROGRAM ends; the reaper goes on in the background, in a session of
 * its own (a signal to the caller's process group does not end the sandbox), with the caller's
 * stdio, which should be /dev/null. It exits once it has no child left.
 *
 * Exit status 127 with one line on stderr if PROGRAM cannot run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "stasis-reaper: %s %s: %s\n", what, detail, strerror(errno));
    return 127;
}

/* PROGRAM's exit status as a shell tells it. */
static int status_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 127;
}

/* The background half: PROGRAM's parent, then the reaper of everything PROGRAM left. */
static void reap(int report, char **argv) {
    if (setsid() < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || chdir("/") != 0) _exit(fail("becoming", "the reaper"));
    pid_t program = fork();
    if (program < 0) _exit(fail("starting", argv[0]));
    if (program == 0) {
        execv(argv[0], argv); /* the report pipe is close-on-exec: PROGRAM and what it leaves do not hold it */
        _exit(fail("running", argv[0]));
    }
    int status = 0;
    while (waitpid(program, &status, 0) < 0)
        if (errno != EINTR) _exit(fail("waiting for", argv[0]));
    int code = status_code(status);
    if (write(report, &code, sizeof code) != (ssize_t)sizeof code) _exit(fail("reporting the status of", argv[0]));
    close(report);
    for (;;)
        if (wait(NULL) < 0 && errno == ECHILD) _exit(0);
}

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] != '/') {
        fprintf(stderr, "usage: stasis-reaper /PROGRAM [ARGS...]\n");
        return 2;
    }
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return fail("making", "a pipe");
    pid_t reaper = fork();
    if (reaper < 0) return fail("starting", "the reaper");
    if (reaper == 0) {
        close(report[0]);
        reap(report[1], argv + 1);
    }
    close(report[1]);
    int code;
    ssize_t n;
    while ((n = read(report[0], &code, sizeof code)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof code) {
        fprintf(stderr, "stasis-reaper: the reaper ended before %s did\n", argv[1]);
        return 127;
    }
    return code;
}
