/*
 * stasis-criu: CRIU as runc runs it, with the kernel's same-page merging (KSM) turned on for every
 * process it restores.
 *
 * runc is given this helper as its CRIU (--criu) when the service shares forks' pages; the helper
 * marks itself PR_SET_MEMORY_MERGE and executes the real CRIU, named by STASIS_CRIU_BINARY. The mark
 * is inherited by CRIU and by the tasks it restores (forked from CRIU), so ksmd merges their
 * identical anonymous pages: forks of one checkpoint share what they have not written since.
 * Nothing else changes: a kernel without the prctl (before 6.4) only loses the sharing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

int main(int argc, char **argv) {
    (void)argc;
    const char *criu = getenv("STASIS_CRIU_BINARY");
    if (!criu || criu[0] != '/') {
        fprintf(stderr, "stasis-criu: STASIS_CRIU_BINARY must name the real CRIU by its absolute path\n");
        return 127;
    }
    if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0 && errno != EINVAL)
        fprintf(stderr, "stasis-criu: PR_SET_MEMORY_MERGE: %s (pages are not shared)\n", strerror(errno));
    argv[0] = (char *)criu;
    execv(criu, argv);
    fprintf(stderr, "stasis-criu: cannot execute %s: %s\n", criu, strerror(errno));
    return 127;
}
