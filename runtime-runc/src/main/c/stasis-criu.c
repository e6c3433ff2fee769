/*
 * stasis-criu: CRIU as runc runs it, minus one CRIU start per checkpoint and per restore, and with
 * the kernel's same-page merging (KSM) for what it restores when the service shares forks' pages.
 *
 * runc is given this helper as its CRIU (--criu); the real CRIU is named by STASIS_CRIU_BINARY.
 *
 * - Its version. Each runc command asks CRIU for its version before it dumps or restores: a
 *   `criu swrk FD` of its own whose only request is VERSION, 4-29 ms of starting a dynamically
 *   linked CRIU here. With STASIS_CRIU_VERSION=MAJOR.MINOR.SUBLEVEL (what the real CRIU's
 *   --version said when the service started), such a call is answered here. The request is only
 *   peeked at: any other request stays on the socket for the real CRIU, which this helper becomes.
 * - With STASIS_CRIU_PATH=DIR, DIR goes first on CRIU's PATH: it holds stasis-tar as `tar`, which
 *   saves and refills the sandbox's tmpfs mounts without a tar and a gzip process each.
 * - With STASIS_CRIU_MERGE=1 the helper marks itself PR_SET_MEMORY_MERGE before it becomes CRIU.
 *   The mark is inherited by the tasks CRIU restores (forked from it), so ksmd merges their
 *   identical anonymous pages: forks of one checkpoint share what they have not written since. A
 *   kernel without the prctl (before 6.4) only loses the sharing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

/* From CRIU's RPC protocol (images/rpc.proto): criu_req_type VERSION, and the fields used below. */
#define REQ_VERSION 10
#define TAG_TYPE 0x08            /* field 1, varint: criu_req.type, criu_resp.type */
#define TAG_SUCCESS 0x10         /* field 2, varint: criu_resp.success */
#define TAG_RESP_VERSION 0x52    /* field 10, length-delimited: criu_resp.version */
#define TAG_MAJOR 0x08           /* criu_version.major_number */
#define TAG_MINOR 0x10           /* criu_version.minor_number */
#define TAG_SUBLEVEL 0x20        /* criu_version.sublevel */

static size_t put_varint(uint8_t *out, uint32_t value) {
    size_t n = 0;
    do {
        out[n] = value & 0x7f;
        value >>= 7;
        if (value) out[n] |= 0x80;
        n++;
    } while (value);
    return n;
}

/* MAJOR.MINOR.SUBLEVEL, each 0-9999; 0 when the text is not that. */
static int parse_version(const char *text, uint32_t parts[3]) {
    char *end;
    for (int i = 0; i < 3; i++) {
        if (text[0] < '0' || text[0] > '9') return 0;
        unsigned long value = strtoul(text, &end, 10);
        if (value > 9999 || *end != (i < 2 ? '.' : '\0')) return 0;
        parts[i] = (uint32_t)value;
        text = end + 1;
    }
    return 1;
}

/*
 * Answers the swrk socket's first request if it is a bare VERSION request. Returns 1 when answered,
 * 0 when the request is for the real CRIU (left on the socket), -1 when answering failed.
 */
static int answer_version(int fd, const uint32_t version[3]) {
    uint8_t request[64];
    ssize_t got;
    do {
        got = recv(fd, request, sizeof request, MSG_PEEK);
    } while (got < 0 && errno == EINTR);
    /* go-criu's VERSION request is criu_req{type: VERSION} and nothing else: two bytes. */
    if (got != 2 || request[0] != TAG_TYPE || request[1] != REQ_VERSION) return 0;
    if (recv(fd, request, sizeof request, 0) != got) return -1;

    uint8_t inner[32], reply[64];
    size_t in = 0, n = 0;
    inner[in++] = TAG_MAJOR;
    in += put_varint(inner + in, version[0]);
    inner[in++] = TAG_MINOR;
    in += put_varint(inner + in, version[1]);
    inner[in++] = TAG_SUBLEVEL;
    in += put_varint(inner + in, version[2]);
    reply[n++] = TAG_TYPE;
    reply[n++] = REQ_VERSION;
    reply[n++] = TAG_SUCCESS;
    reply[n++] = 1;
    reply[n++] = TAG_RESP_VERSION;
    n += put_varint(reply + n, (uint32_t)in);
    memcpy(reply + n, inner, in);
    n += in;
    ssize_t sent;
    do {
        sent = send(fd, reply, n, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent == (ssize_t)n ? 1 : -1;
}

int main(int argc, char **argv) {
    const char *criu = getenv("STASIS_CRIU_BINARY");
    if (!criu || criu[0] != '/') {
        fprintf(stderr, "stasis-criu: STASIS_CRIU_BINARY must name the real CRIU by its absolute path\n");
        return 127;
    }
    const char *version_text = getenv("STASIS_CRIU_VERSION");
    uint32_t version[3];
    if (argc == 3 && strcmp(argv[1], "swrk") == 0 && version_text && parse_version(version_text, version)) {
        char *end;
        long fd = strtol(argv[2], &end, 10);
        if (*end == '\0' && fd >= 0 && fd <= 1024) {
            int answered = answer_version((int)fd, version);
            if (answered == 1) return 0;
            if (answered < 0) {
                fprintf(stderr, "stasis-criu: answering the version request: %s\n", strerror(errno));
                return 1;
            }
        }
    }
    const char *tools = getenv("STASIS_CRIU_PATH");
    if (tools && tools[0] == '/') {
        const char *path = getenv("PATH");
        if (!path || !path[0]) path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"; /* what CRIU would search */
        size_t len = strlen(tools) + 1 + strlen(path) + 1;
        char *joined = malloc(len);
        if (joined) {
            snprintf(joined, len, "%s:%s", tools, path);
            setenv("PATH", joined, 1);
        }
    }
    const char *merge = getenv("STASIS_CRIU_MERGE");
    if (merge && strcmp(merge, "1") == 0 && prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0 && errno != EINVAL)
        fprintf(stderr, "stasis-criu: PR_SET_MEMORY_MERGE: %s (pages are not shared)\n", strerror(errno));
    argv[0] = (char *)criu;
    execv(criu, argv);
    fprintf(stderr, "stasis-criu: cannot execute %s: %s\n", criu, strerror(errno));
    return 127;
}
