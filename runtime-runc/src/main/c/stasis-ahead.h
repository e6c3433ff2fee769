/*
 * For a host helper the service starts ahead of its call (runc.HelperAhead): started with no
 * arguments, it waits for them on stdin, NUL-terminated, read to its end, then runs itself again
 * with them, so that the process then looks and behaves as if started with them (its command
 * line included: a restarted service finds the saves under way of the one before it by theirs).
 * Stdin closed empty: it exits 0 having done nothing (the service ended before calling it).
 *
 * Why: a start through the JDK (its spawn helper, then the exec) takes 5-30 ms on a busy host;
 * the call then costs this read and one exec of a small static binary instead.
 */
#ifndef STASIS_AHEAD_H
#define STASIS_AHEAD_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AHEAD_MAX_ARGS 16

static void ahead_fail(const char *what) {
    fprintf(stderr, "%s (started ahead): %s: %s\n", program_invocation_short_name, what, strerror(errno));
    exit(1);
}

/* Returns only when argc > 1: the arguments were given on the command line. */
static void ahead_take_arguments(int argc, char **argv) {
    if (argc > 1) return;
    static char input[16384];
    size_t used = 0;
    for (ssize_t n; used < sizeof input && (n = read(0, input + used, sizeof input - used)) != 0; ) {
        if (n < 0) {
            if (errno == EINTR) continue;
            ahead_fail("reading the arguments");
        }
        used += (size_t)n;
    }
    if (used == 0) exit(0);
    errno = EINVAL;
    if (used == sizeof input || input[used - 1] != '\0') ahead_fail("reading the arguments (each NUL-terminated)");
    char *args[AHEAD_MAX_ARGS + 2] = {argv[0]};
    int count = 1;
    for (char *arg = input; arg < input + used; arg += strlen(arg) + 1) {
        if (count > AHEAD_MAX_ARGS) ahead_fail("reading the arguments (too many)");
        args[count++] = arg;
    }
    args[count] = NULL;
    execv("/proc/self/exe", args);
    ahead_fail("running itself with the arguments");
}

#endif
