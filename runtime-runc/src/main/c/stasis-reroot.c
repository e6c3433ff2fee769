/*
 * stasis-reroot: gives a running sandbox another root filesystem, run by the host as root.
 *
 *   stasis-reroot PID NEWROOT
 *
 * PID is the sandbox's process 1 as the host sees it, NEWROOT the host path of the new root (a
 * directory the sandbox's user namespace can use, as every sandbox root is). Afterwards every
 * mount the sandbox had on top of its root (/proc, /sys, /dev and what lies below them, bind
 * mounts such as /etc/resolv.conf) sits at the same place in NEWROOT, and NEWROOT is the root of
 * the sandbox's mount namespace: the root and working directory of each of its processes that had
 * the old root move with it (pivot_root does that). The old root is detached from the namespace.
 * Last, process 1 (stasis-init) gets SIGUSR1, on which it binds its socket again, in the new root.
 *
 * The service keeps one started ahead, waiting for PID and NEWROOT on stdin (stasis-ahead.h).
 *
 * This is how a sandbox started ahead of demand (a warm one) becomes a fork of a files checkpoint
 * in milliseconds: starting a container costs tens of them, a new root a few.
 *
 * Only the host can do it: the sandbox has no CAP_SYS_ADMIN, and a multi-threaded process (the
 * service's JVM) cannot enter another mount namespace. The new root is cloned as a detached mount
 * in the host's namespace (open_tree), then moved into the sandbox's (move_mount), so the sandbox
 * never sees a host path.
 *
 * Exit status 0 on success; otherwise 1 with one line on stderr naming the step and errno. A
 * failure after the first mount moved leaves the sandbox broken: the caller destroys it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stasis-ahead.h"

#define STAGING "/.stasis-reroot"
#define MAX_MOUNTS 256

static void fail(const char *step, const char *what) {
    fprintf(stderr, "stasis-reroot: %s%s%s: %s\n", step, what ? " " : "", what ? what : "", strerror(errno));
    exit(1);
}

struct mount_entry {
    int id, parent;
    char point[512];
};

/*
 * The mounts of the sandbox's namespace, with their places as its process 1 sees them. Read from the
 * host's /proc before entering: inside, /proc is the sandbox's and has no entry for this process.
 */
static int read_mounts(const char *pid, struct mount_entry *mounts) {
    char path[128];
    snprintf(path, sizeof path, "/proc/%s/mountinfo", pid);
    FILE *info = fopen(path, "re");
    if (!info) fail("reading", path);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, info)) {
        if (n == MAX_MOUNTS) {
            errno = E2BIG;
            fail("reading", "the sandbox's mounts (too many)");
        }
        struct mount_entry *m = &mounts[n];
        if (sscanf(line, "%d %d %*s %*s %511s", &m->id, &m->parent, m->point) != 3) continue;
        if (strchr(m->point, '\\')) { /* an escaped space or newline: none of a sandbox's own mounts has one */
            errno = EINVAL;
            fail("unusual mount point", m->point);
        }
        n++;
    }
    fclose(info);
    return n;
}

/* The mount that is "/" now: the last one listed there (a later one at the same place covers it). */
static int root_mount(const struct mount_entry *mounts, int n) {
    int root = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(mounts[i].point, "/")) root = mounts[i].id;
    if (root < 0) {
        errno = ENOENT;
        fail("finding", "the root mount");
    }
    return root;
}

/* A place for a mount point in the new root that it lacks: a directory, or a file for a file's bind mount. */
static void ensure_point(const char *from, const char *to) {
    struct stat old, target;
    if (lstat(to, &target) == 0) return;
    if (stat(from, &old) != 0) fail("stat", from);
    if (S_ISDIR(old.st_mode)) {
        if (mkdir(to, 0755) != 0 && errno != EEXIST) fail("mkdir", to);
    } else {
        int fd = open(to, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) fail("creating", to);
        close(fd);
    }
}

int main(int argc, char **argv) {
    ahead_take_arguments(argc, argv);
    if (argc != 3) {
        fprintf(stderr, "usage: stasis-reroot PID NEWROOT\n");
        return 2;
    }
    char path[128];
    snprintf(path, sizeof path, "/proc/%s/ns/mnt", argv[1]);
    int ns = open(path, O_RDONLY | O_CLOEXEC);
    if (ns < 0) fail("opening", path);
    static struct mount_entry mounts[MAX_MOUNTS];
    int n = read_mounts(argv[1], mounts);
    int root = root_mount(mounts, n);
    int tree = (int)syscall(SYS_open_tree, AT_FDCWD, argv[2], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (tree < 0) fail("cloning", argv[2]);
    if (setns(ns, CLONE_NEWNS) != 0) fail("entering", path);
    if (chdir("/") != 0) fail("chdir", "/");

    if (mkdir(STAGING, 0700) != 0 && errno != EEXIST) fail("mkdir", STAGING);
    if (syscall(SYS_move_mount, tree, "", AT_FDCWD, STAGING, MOVE_MOUNT_F_EMPTY_PATH) != 0) fail("attaching", argv[2]);

    for (int i = 0; i < n; i++) {
        const struct mount_entry *m = &mounts[i];
        if (m->parent != root || !strcmp(m->point, "/")) continue;
        char to[sizeof STAGING + sizeof m->point];
        snprintf(to, sizeof to, "%s%s", STAGING, m->point);
        ensure_point(m->point, to);
        if (mount(m->point, to, NULL, MS_MOVE, NULL) != 0) fail("moving", m->point);
    }

    if (chdir(STAGING) != 0) fail("chdir", STAGING);
    if (syscall(SYS_pivot_root, ".", ".") != 0) fail("pivot_root", argv[2]);
    /* The old root is now stacked under the new one: detach it. */
    if (umount2(".", MNT_DETACH) != 0) fail("detaching", "the old root");
    if (kill((pid_t)atol(argv[1]), SIGUSR1) != 0) fail("signalling", argv[1]);
    return 0;
}
