/*
 * stasis-tar: the `tar` CRIU runs to save and refill a sandbox's tmpfs mounts, without starting a
 * tar and a gzip process for each.
 *
 * CRIU saves every tmpfs of a sandbox (/dev, /dev/shm, /sys/fs/cgroup and the masked directories,
 * five here) with `tar --create --gzip ...` and refills it on restore with `tar --extract --gzip
 * ...`: a dynamically linked tar and a gzip per mount, 12 ms a mount on a slow host, so ~60 ms of
 * each dump and of each restore. stasis-criu puts this helper first on CRIU's PATH, as `tar`.
 *
 * - create, with exactly CRIU's arguments: writes a GNU tar archive of the tree as a gzip stream of
 *   stored (not compressed) blocks, marked by a gzip comment. Any tar and gzip read it.
 * - extract, with exactly CRIU's arguments: an archive this helper wrote is extracted here, as GNU
 *   tar extracts as root (owners, permissions with their special bits, modification times,
 *   directories' last); any other (one the real tar wrote: an older image) goes to the real tar.
 * - Everything else goes to the real tar (the next `tar` on PATH), untouched: other arguments, and
 *   trees this helper does not write as tar would (sparse files, which tar keeps sparse; ids, sizes,
 *   times or device numbers beyond the plain header's octal fields; paths over PATH_MAX).
 *
 * Paths are resolved below the target directory one component at a time, never following a
 * symbolic link and never `..`.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#define BLOCK 512
#define STORED_MAX 65535
#define OCTAL7_MAX 07777777ULL
#define OCTAL11_MAX 077777777777ULL
/* The gzip comment that marks an archive as this helper's; real gzip writes none. */
static const char MARK[] = "stasis-tar 1";
/* gzip header: magic, deflate, FCOMMENT, no time, no extra flags, Unix. */
static const uint8_t GZIP_HEADER[10] = {0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 3};

static const char *const CREATE_FLAGS[] = {"--create", "--gzip", "--no-unquote", "--no-wildcards", "--one-file-system",
                                           "--check-links", "--preserve-permissions", "--sparse", "--numeric-owner", NULL};
static const char *const EXTRACT_FLAGS[] = {"--extract", "--gzip", "--no-unquote", "--no-wildcards", NULL};

static int fail(const char *what, const char *path) {
    fprintf(stderr, "stasis-tar: %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(errno));
    return -1;
}

/* ---------------------------------------------------------------- the real tar */

static int exec_real_tar(char **argv) {
    struct stat self;
    if (stat("/proc/self/exe", &self) != 0) {
        fail("stat", "/proc/self/exe");
        return 127;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char candidate[PATH_MAX];
    while (*path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + sizeof "/tar" <= sizeof candidate) {
            memcpy(candidate, path, len);
            memcpy(candidate + len, "/tar", sizeof "/tar");
            struct stat st;
            if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && !(st.st_dev == self.st_dev && st.st_ino == self.st_ino)
                && access(candidate, X_OK) == 0) {
                execv(candidate, argv);
                fail("cannot execute", candidate);
                return 127;
            }
        }
        path += len;
        if (*path == ':') path++;
    }
    fprintf(stderr, "stasis-tar: no other tar on PATH for this archive or these arguments\n");
    return 127;
}

/* Whether argv is exactly each of `flags` once plus `--directory DIR` (and the member `.` when `member`). */
static int matches(int argc, char **argv, const char *const *flags, int member, const char **dir) {
    unsigned seen = 0, all = 0;
    int members = 0;
    *dir = NULL;
    for (int f = 0; flags[f]; f++) all |= 1u << f;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--directory") == 0 && i + 1 < argc && !*dir) {
            *dir = argv[++i];
            continue;
        }
        if (member && strcmp(argv[i], ".") == 0) {
            members++;
            continue;
        }
        int f = 0;
        while (flags[f] && strcmp(argv[i], flags[f]) != 0) f++;
        if (!flags[f] || (seen & (1u << f))) return 0;
        seen |= 1u << f;
    }
    return seen == all && *dir && members == (member ? 1 : 0);
}

/* ---------------------------------------------------------------- gzip of stored blocks */

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    while (n--) crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static int write_all(int fd, const void *data, size_t n) {
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return fail("writing the archive", NULL);
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

struct out {
    int fd;
    uint32_t crc, size;
    size_t len;
    uint8_t buf[STORED_MAX];
};

static int out_block(struct out *o, int final) {
    uint8_t head[5] = {final ? 1 : 0, o->len & 0xff, o->len >> 8, ~o->len & 0xff, (~o->len >> 8) & 0xff};
    if (write_all(o->fd, head, sizeof head) || write_all(o->fd, o->buf, o->len)) return -1;
    o->len = 0;
    return 0;
}

static int out_put(struct out *o, const void *data, size_t n) {
    const uint8_t *p = data;
    o->crc = crc_update(o->crc, p, n);
    o->size += (uint32_t)n;
    while (n > 0) {
        size_t take = STORED_MAX - o->len < n ? STORED_MAX - o->len : n;
        memcpy(o->buf + o->len, p, take);
        o->len += take;
        p += take;
        n -= take;
        if (o->len == STORED_MAX && out_block(o, 0)) return -1;
    }
    return 0;
}

static int out_zeros(struct out *o, size_t n) {
    static const uint8_t zeros[BLOCK];
    while (n > 0) {
        size_t take = n < BLOCK ? n : BLOCK;
        if (out_put(o, zeros, take)) return -1;
        n -= take;
    }
    return 0;
}

static int out_finish(struct out *o) {
    if (out_block(o, 1)) return -1;
    uint8_t tail[8];
    for (int i = 0; i < 4; i++) {
        tail[i] = (o->crc >> (8 * i)) & 0xff;
        tail[4 + i] = (o->size >> (8 * i)) & 0xff;
    }
    return write_all(o->fd, tail, sizeof tail);
}

/* ---------------------------------------------------------------- tar headers */

static void octal(char *field, size_t width, unsigned long long value) {
    char text[24];
    snprintf(text, sizeof text, "%0*llo", (int)width - 1, value);
    memcpy(field, text, width); /* the digits and their NUL */
}

/* Fills the checksum field as GNU tar does (six octal digits, NUL, space) and writes the header. */
static int put_sealed(struct out *o, uint8_t h[BLOCK]) {
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < BLOCK; i++) sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
    return out_put(o, h, BLOCK);
}

static int put_long_name(struct out *o, char type, const char *name) {
    uint8_t h[BLOCK] = {0};
    size_t len = strlen(name) + 1;
    strcpy((char *)h, "././@LongLink");
    octal((char *)h + 100, 8, 0644);
    octal((char *)h + 108, 8, 0);
    octal((char *)h + 116, 8, 0);
    octal((char *)h + 124, 12, len);
    octal((char *)h + 136, 12, 0);
    h[156] = (uint8_t)type;
    memcpy(h + 257, "ustar  ", 8);
    if (put_sealed(o, h) || out_put(o, name, len)) return -1;
    return out_zeros(o, (BLOCK - len % BLOCK) % BLOCK);
}

static int put_header(struct out *o, const char *name, const struct stat *st, char type, const char *link, unsigned long long size) {
    if (strlen(name) >= 100 && put_long_name(o, 'L', name)) return -1;
    if (link && strlen(link) >= 100 && put_long_name(o, 'K', link)) return -1;
    uint8_t h[BLOCK] = {0};
    strncpy((char *)h, name, 100);
    octal((char *)h + 100, 8, st->st_mode & 07777);
    octal((char *)h + 108, 8, st->st_uid);
    octal((char *)h + 116, 8, st->st_gid);
    octal((char *)h + 124, 12, size);
    octal((char *)h + 136, 12, (unsigned long long)st->st_mtim.tv_sec);
    h[156] = (uint8_t)type;
    if (link) strncpy((char *)h + 157, link, 100);
    memcpy(h + 257, "ustar  ", 8);
    if (type == '3' || type == '4') {
        octal((char *)h + 329, 8, major(st->st_rdev));
        octal((char *)h + 337, 8, minor(st->st_rdev));
    }
    return put_sealed(o, h);
}

/* ---------------------------------------------------------------- create */

struct link_seen {
    dev_t dev;
    ino_t ino;
    char *name;
};

struct walk {
    struct out *out; /* NULL while checking the tree */
    dev_t root_dev;
    struct link_seen *links;
    size_t nlinks, cap;
};

/* 1 when tar would store this entry in a way this helper does not (sparse, fields too small). */
static int unsupported(const struct stat *st) {
    if (st->st_uid > OCTAL7_MAX || st->st_gid > OCTAL7_MAX) return 1;
    if (st->st_mtim.tv_sec < 0 || (unsigned long long)st->st_mtim.tv_sec > OCTAL11_MAX) return 1;
    if (S_ISREG(st->st_mode) && ((unsigned long long)st->st_size > OCTAL11_MAX || (long long)st->st_blocks * 512 < (long long)st->st_size))
        return 1;
    if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) && (major(st->st_rdev) > OCTAL7_MAX || minor(st->st_rdev) > OCTAL7_MAX))
        return 1;
    return 0;
}

static int copy_file(struct out *o, int dirfd, const char *base, const char *name, unsigned long long size) {
    int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return fail("opening", name);
    static uint8_t buf[1 << 16];
    unsigned long long left = size;
    while (left > 0) {
        ssize_t r = read(fd, buf, left < sizeof buf ? left : sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            fail("reading", name);
            close(fd);
            return -1;
        }
        if (r == 0) break; /* it shrank: zeros for the rest, as tar does */
        if (out_put(o, buf, (size_t)r)) {
            close(fd);
            return -1;
        }
        left -= (unsigned long long)r;
    }
    close(fd);
    if (out_zeros(o, left)) return -1;
    return out_zeros(o, (BLOCK - size % BLOCK) % BLOCK);
}

/* Returns 0 when written (or fine, while checking), 1 when the real tar must do it, -1 on an error. */
static int walk_entry(struct walk *w, int dirfd, const char *base, char *name, size_t len, const struct stat *st);

static int walk_dir(struct walk *w, int fd, char *name, size_t len) {
    int copy = dup(fd);
    DIR *dir = copy < 0 ? NULL : fdopendir(copy);
    if (!dir) {
        if (copy >= 0) close(copy);
        return w->out ? fail("listing", name) : 1;
    }
    rewinddir(dir); /* the copy shares its offset with fd, which an earlier pass may have read to the end */
    int result = 0;
    struct dirent *e;
    while (result == 0 && (errno = 0, e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        size_t add = strlen(e->d_name);
        if (len + add + 2 >= PATH_MAX) {
            result = w->out ? (errno = ENAMETOOLONG, fail("naming", name)) : 1;
            break;
        }
        memcpy(name + len, e->d_name, add + 1);
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            result = w->out ? fail("stat", name) : 1;
            break;
        }
        result = walk_entry(w, fd, e->d_name, name, len + add, &st);
        name[len] = '\0';
    }
    if (result == 0 && e == NULL && errno != 0) result = w->out ? fail("listing", name) : 1;
    closedir(dir);
    return result;
}

static int remember_link(struct walk *w, const struct stat *st, const char *name) {
    if (w->nlinks == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        struct link_seen *grown = realloc(w->links, cap * sizeof *grown);
        if (!grown) return fail("remembering a hard link", name);
        w->links = grown;
        w->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return fail("remembering a hard link", name);
    w->links[w->nlinks++] = (struct link_seen){st->st_dev, st->st_ino, copy};
    return 0;
}

static int walk_entry(struct walk *w, int dirfd, const char *base, char *name, size_t len, const struct stat *st) {
    if (unsupported(st)) return w->out ? (errno = EOVERFLOW, fail("changed while saved", name)) : 1;
    if (S_ISSOCK(st->st_mode)) return 0; /* tar ignores sockets */
    if (S_ISDIR(st->st_mode)) {
        name[len] = '/';
        name[len + 1] = '\0';
        if (w->out && put_header(w->out, name, st, '5', NULL, 0)) return -1;
        if (st->st_dev != w->root_dev) return 0; /* another filesystem: its entry, not its contents */
        int fd = openat(dirfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return w->out ? fail("opening", name) : 1;
        int result = walk_dir(w, fd, name, len + 1);
        close(fd);
        return result;
    }
    if (!w->out) return 0;
    if (st->st_nlink > 1) {
        for (size_t i = 0; i < w->nlinks; i++)
            if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino) return put_header(w->out, name, st, '1', w->links[i].name, 0);
        if (remember_link(w, st, name)) return -1;
    }
    if (S_ISREG(st->st_mode)) {
        if (put_header(w->out, name, st, '0', NULL, (unsigned long long)st->st_size)) return -1;
        return copy_file(w->out, dirfd, base, name, (unsigned long long)st->st_size);
    }
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, base, target, sizeof target - 1);
        if (n < 0) return fail("reading the link", name);
        target[n] = '\0';
        return put_header(w->out, name, st, '2', target, 0);
    }
    if (S_ISCHR(st->st_mode)) return put_header(w->out, name, st, '3', NULL, 0);
    if (S_ISBLK(st->st_mode)) return put_header(w->out, name, st, '4', NULL, 0);
    if (S_ISFIFO(st->st_mode)) return put_header(w->out, name, st, '6', NULL, 0);
    return 0;
}

static int walk_root(struct walk *w, int root) {
    struct stat st;
    if (fstat(root, &st) != 0) return w->out ? fail("stat", ".") : 1;
    if (unsupported(&st)) return 1;
    w->root_dev = st.st_dev;
    static char name[PATH_MAX];
    strcpy(name, "./");
    if (w->out && put_header(w->out, name, &st, '5', NULL, 0)) return -1;
    return walk_dir(w, root, name, 2);
}

static int create(const char *dir, char **argv) {
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return exec_real_tar(argv);
    struct walk check = {0};
    int verdict = walk_root(&check, root);
    if (verdict != 0) {
        close(root);
        return exec_real_tar(argv);
    }
    static struct out out;
    out.fd = STDOUT_FILENO;
    if (write_all(out.fd, GZIP_HEADER, sizeof GZIP_HEADER) || write_all(out.fd, MARK, sizeof MARK)) return 2;
    struct walk w = {.out = &out};
    if (walk_root(&w, root) != 0 || out_zeros(&out, 2 * BLOCK) || out_finish(&out)) return 2;
    close(root);
    return 0;
}

/* ---------------------------------------------------------------- extract */

struct in {
    int fd;
    off_t at;    /* the file offset of the next stored byte to read */
    size_t left; /* what is left of the current stored block */
    int final;   /* the current block is the last */
    uint32_t crc, size;
};

static int read_at(int fd, void *buf, size_t n, off_t at) {
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
        at += r;
    }
    return 0;
}

/* The offset of the first stored block when the archive is this helper's; -1 when it is not (or not seekable). */
static off_t marked(int fd) {
    uint8_t head[sizeof GZIP_HEADER + sizeof MARK];
    if (read_at(fd, head, sizeof head, 0) != 0) return -1;
    if (memcmp(head, GZIP_HEADER, sizeof GZIP_HEADER) != 0 || memcmp(head + sizeof GZIP_HEADER, MARK, sizeof MARK) != 0) return -1;
    return (off_t)sizeof head;
}

/* Whether every block from `at` on is stored, ending with the last and the trailer, and nothing after. */
static int stored_only(int fd, off_t at) {
    for (;;) {
        uint8_t h[5];
        if (read_at(fd, h, sizeof h, at) != 0 || (h[0] & ~1u) != 0) return 0;
        unsigned len = h[1] | h[2] << 8, nlen = h[3] | h[4] << 8;
        if ((len ^ 0xffffu) != nlen) return 0;
        at += 5 + len;
        if (h[0] & 1) break;
    }
    uint8_t tail[9];
    ssize_t r;
    do {
        r = pread(fd, tail, sizeof tail, at);
    } while (r < 0 && errno == EINTR);
    return r == 8;
}

/* Steps into the next stored block (stored_only has checked them all). */
static int next_block(struct in *in) {
    uint8_t h[5];
    if (read_at(in->fd, h, sizeof h, in->at) != 0) return fail("reading the archive", NULL);
    in->final = h[0] & 1;
    in->left = h[1] | h[2] << 8;
    in->at += 5;
    return 0;
}

static int in_read(struct in *in, void *buf, size_t n) {
    uint8_t *p = buf;
    while (n > 0) {
        if (in->left == 0) {
            if (in->final) {
                fprintf(stderr, "stasis-tar: the archive ends early\n");
                return -1;
            }
            if (next_block(in)) return -1;
            continue;
        }
        size_t take = in->left < n ? in->left : n;
        if (read_at(in->fd, p, take, in->at) != 0) return fail("reading the archive", NULL);
        in->crc = crc_update(in->crc, p, take);
        in->size += (uint32_t)take;
        in->at += (off_t)take;
        in->left -= take;
        p += take;
        n -= take;
    }
    return 0;
}

static int in_skip(struct in *in, unsigned long long n) {
    uint8_t buf[BLOCK];
    while (n > 0) {
        size_t take = n < sizeof buf ? n : sizeof buf;
        if (in_read(in, buf, take)) return -1;
        n -= take;
    }
    return 0;
}

/* Reads what follows the archive's end mark (its second zero block), then checks the CRC and length of it all. */
static int in_check_end(struct in *in) {
    uint8_t buf[BLOCK];
    while (in->left > 0 || !in->final) {
        if (in->left == 0 ? next_block(in) : in_read(in, buf, in->left < sizeof buf ? in->left : sizeof buf)) return -1;
    }
    uint8_t tail[8];
    if (read_at(in->fd, tail, sizeof tail, in->at) != 0) return fail("reading the archive's trailer", NULL);
    uint32_t crc = tail[0] | tail[1] << 8 | tail[2] << 16 | (uint32_t)tail[3] << 24;
    uint32_t size = tail[4] | tail[5] << 8 | tail[6] << 16 | (uint32_t)tail[7] << 24;
    if (crc != in->crc || size != in->size) {
        fprintf(stderr, "stasis-tar: the archive is damaged (its CRC or length differs)\n");
        return -1;
    }
    return 0;
}

static int parse_octal(const uint8_t *field, size_t width, unsigned long long *value) {
    size_t i = 0;
    while (i < width && field[i] == ' ') i++;
    unsigned long long v = 0;
    int digits = 0;
    for (; i < width && field[i] >= '0' && field[i] <= '7'; i++, digits++) v = v * 8 + (field[i] - '0');
    if (i < width && field[i] != '\0' && field[i] != ' ') return -1;
    *value = v;
    return digits > 0 ? 0 : -1;
}

/* Opens the directory that holds `path` below `root`, never through a symlink or `..`; *base is its last component, "" for the root. */
static int open_parent(int root, char *path, char **base) {
    while (path[0] == '.' && path[1] == '/') path += 2;
    if (path[0] == '/') {
        errno = EINVAL;
        return fail("refusing an absolute name", path);
    }
    size_t len = strlen(path);
    while (len > 0 && path[len - 1] == '/') path[--len] = '\0';
    if (len == 0 || strcmp(path, ".") == 0) {
        *base = path + len;
        return root;
    }
    int fd = root;
    char *part = path;
    for (;;) {
        char *slash = strchr(part, '/');
        if (slash) *slash = '\0';
        if (strcmp(part, "..") == 0) {
            errno = EINVAL;
            if (fd != root) close(fd);
            return fail("refusing a name with ..", path);
        }
        if (!slash) {
            *base = part;
            return fd;
        }
        int next = fd;
        if (part[0] != '\0' && strcmp(part, ".") != 0) {
            next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) {
                fail("opening the directory", part);
                if (fd != root) close(fd);
                return -1;
            }
            if (fd != root) close(fd);
        }
        *slash = '/';
        fd = next;
        part = slash + 1;
    }
}

struct dir_later {
    char *name;
    mode_t mode;
    uid_t uid;
    gid_t gid;
    time_t mtime;
};

static int read_long_name(struct in *in, unsigned long long size, char **name) {
    if (size == 0 || size > PATH_MAX) {
        fprintf(stderr, "stasis-tar: a long name of %llu bytes\n", size);
        return -1;
    }
    char *text = malloc(size + 1);
    if (!text) return fail("reading a long name", NULL);
    if (in_read(in, text, size) || in_skip(in, (BLOCK - size % BLOCK) % BLOCK)) {
        free(text);
        return -1;
    }
    text[size] = '\0';
    free(*name);
    *name = text;
    return 0;
}

static int remove_old(int parent, const char *base, const char *name) {
    if (unlinkat(parent, base, 0) != 0 && errno != ENOENT) return fail("removing the old", name);
    return 0;
}

static int owner_and_time(int parent, const char *base, const char *name, uid_t uid, gid_t gid, time_t mtime) {
    if (fchownat(parent, base, uid, gid, AT_SYMLINK_NOFOLLOW) != 0) return fail("changing the owner of", name);
    struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = mtime}};
    if (utimensat(parent, base, times, AT_SYMLINK_NOFOLLOW) != 0) return fail("setting the time of", name);
    return 0;
}

/* Owner, then mode (a chown clears set-id bits), then modification time, as tar sets them. */
static int set_attributes(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid, time_t mtime) {
    struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = mtime}};
    if (fchown(fd, uid, gid) != 0) return fail("changing the owner of", name);
    if (fchmod(fd, mode) != 0) return fail("changing the mode of", name);
    if (futimens(fd, times) != 0) return fail("setting the time of", name);
    return 0;
}

static int extract_file(struct in *in, int parent, const char *base, const char *name, mode_t mode, uid_t uid, gid_t gid,
                        time_t mtime, unsigned long long size) {
    if (remove_old(parent, base, name)) return -1;
    int fd = openat(parent, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return fail("creating", name);
    static uint8_t buf[1 << 16];
    unsigned long long left = size;
    while (left > 0) {
        size_t take = left < sizeof buf ? left : sizeof buf;
        if (in_read(in, buf, take) || write_all(fd, buf, take)) {
            close(fd);
            return -1;
        }
        left -= take;
    }
    int result = set_attributes(fd, name, mode, uid, gid, mtime);
    if (close(fd) != 0 && result == 0) result = fail("writing", name);
    if (result) return -1;
    return in_skip(in, (BLOCK - size % BLOCK) % BLOCK);
}

/* Extracts the archive on stdin, whose first stored block is at `first`, into `dir`. */
static int extract(const char *dir, off_t first) {
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return fail("opening", dir), 2;
    umask(0);
    struct in in = {.fd = STDIN_FILENO, .at = first};
    struct dir_later *dirs = NULL;
    size_t ndirs = 0, cap = 0;
    char *long_name = NULL, *long_link = NULL;
    for (;;) {
        uint8_t h[BLOCK];
        if (in_read(&in, h, BLOCK)) return 2;
        int zero = 1;
        for (int i = 0; i < BLOCK && zero; i++) zero = h[i] == 0;
        if (zero) break;
        unsigned long long sum, mode, uid, gid, size, mtime, dev_major = 0, dev_minor = 0;
        unsigned actual = 0;
        for (int i = 0; i < BLOCK; i++) actual += i >= 148 && i < 156 ? ' ' : h[i];
        if (parse_octal(h + 148, 8, &sum) || sum != actual || parse_octal(h + 100, 8, &mode) || parse_octal(h + 108, 8, &uid)
            || parse_octal(h + 116, 8, &gid) || parse_octal(h + 124, 12, &size) || parse_octal(h + 136, 12, &mtime)) {
            fprintf(stderr, "stasis-tar: a damaged header\n");
            return 2;
        }
        char type = (char)h[156];
        if (type == 'L' || type == 'K') {
            if (read_long_name(&in, size, type == 'L' ? &long_name : &long_link)) return 2;
            continue;
        }
        if ((type == '3' || type == '4') && (parse_octal(h + 329, 8, &dev_major) || parse_octal(h + 337, 8, &dev_minor))) {
            fprintf(stderr, "stasis-tar: a damaged device header\n");
            return 2;
        }
        char name[PATH_MAX], link[PATH_MAX];
        if (long_name) snprintf(name, sizeof name, "%s", long_name);
        else memcpy(name, h, 100), name[100] = '\0';
        if (long_link) snprintf(link, sizeof link, "%s", long_link);
        else memcpy(link, h + 157, 100), link[100] = '\0';
        free(long_name);
        free(long_link);
        long_name = long_link = NULL;

        char path[PATH_MAX], *base;
        snprintf(path, sizeof path, "%s", name);
        int parent = open_parent(root, path, &base);
        if (parent < 0) return 2;
        int result = 0;
        mode &= 07777;
        errno = 0;
        switch (type) {
        case '5': {
            if (base[0] != '\0' && mkdirat(parent, base, 0700) != 0) {
                struct stat st;
                if (errno != EEXIST || fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
                    result = fail("making the directory", name);
            }
            if (result == 0) {
                if (ndirs == cap) {
                    cap = cap ? cap * 2 : 32;
                    struct dir_later *grown = realloc(dirs, cap * sizeof *grown);
                    if (!grown) return fail("remembering", name), 2;
                    dirs = grown;
                }
                char *copy = strdup(name);
                if (!copy) return fail("remembering", name), 2;
                dirs[ndirs++] = (struct dir_later){copy, (mode_t)mode, (uid_t)uid, (gid_t)gid, (time_t)mtime};
            }
            break;
        }
        case '0':
        case '\0':
            result = base[0] ? extract_file(&in, parent, base, name, (mode_t)mode, (uid_t)uid, (gid_t)gid, (time_t)mtime, size) : -1;
            size = 0; /* consumed */
            break;
        case '2':
            if (base[0] == '\0' || remove_old(parent, base, name)) result = -1;
            else if (symlinkat(link, parent, base) != 0) result = fail("making the link", name);
            else result = owner_and_time(parent, base, name, (uid_t)uid, (gid_t)gid, (time_t)mtime);
            break;
        case '1': {
            char target[PATH_MAX], *target_base;
            snprintf(target, sizeof target, "%s", link);
            int target_parent = open_parent(root, target, &target_base);
            if (target_parent < 0) result = -1;
            else {
                if (base[0] == '\0' || target_base[0] == '\0' || remove_old(parent, base, name)) result = -1;
                else if (linkat(target_parent, target_base, parent, base, 0) != 0) result = fail("linking", name);
                if (target_parent != root) close(target_parent);
            }
            break;
        }
        case '3':
        case '4':
        case '6': {
            mode_t kind = type == '3' ? S_IFCHR : type == '4' ? S_IFBLK : S_IFIFO;
            if (base[0] == '\0' || remove_old(parent, base, name)) result = -1;
            else if (mknodat(parent, base, kind | (mode_t)mode, makedev(dev_major, dev_minor)) != 0) result = fail("making the node", name);
            else if (owner_and_time(parent, base, name, (uid_t)uid, (gid_t)gid, (time_t)mtime)) result = -1;
            else if (fchmodat(parent, base, (mode_t)mode, 0) != 0) result = fail("changing the mode of", name);
            break;
        }
        default:
            fprintf(stderr, "stasis-tar: %s: an entry of type '%c' this helper does not write\n", name, type);
            result = -1;
        }
        if (parent != root) close(parent);
        if (result) {
            fprintf(stderr, "stasis-tar: cannot extract %s\n", name);
            return 2;
        }
        if (size > 0 && type != '0' && type != '\0' && in_skip(&in, size + (BLOCK - size % BLOCK) % BLOCK)) return 2;
    }
    if (in_check_end(&in)) return 2;
    /* Directories last, as tar does: their times and modes would change as their entries were made. */
    for (size_t i = ndirs; i-- > 0;) {
        char path[PATH_MAX], *base;
        snprintf(path, sizeof path, "%s", dirs[i].name);
        int parent = open_parent(root, path, &base);
        if (parent < 0) return 2;
        int fd = base[0] ? openat(parent, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(root);
        if (parent != root) close(parent);
        if (fd < 0) return fail("opening the directory", dirs[i].name), 2;
        int result = set_attributes(fd, dirs[i].name, dirs[i].mode, dirs[i].uid, dirs[i].gid, dirs[i].mtime);
        close(fd);
        if (result) return 2;
    }
    close(root);
    return 0;
}

int main(int argc, char **argv) {
    const char *dir;
    crc_init();
    if (matches(argc, argv, CREATE_FLAGS, 1, &dir)) return create(dir, argv);
    if (matches(argc, argv, EXTRACT_FLAGS, 0, &dir)) {
        off_t first = marked(STDIN_FILENO);
        if (first < 0 || !stored_only(STDIN_FILENO, first)) return exec_real_tar(argv);
        return extract(dir, first);
    }
    return exec_real_tar(argv);
}
