/*
 * stasis-net: plugs a sandbox into its link, also as runc's hook in a restore. Run by the host as
 * root; one process, no shell, talking rtnetlink itself (the shell script it replaces started a
 * dozen processes: sh, nsenter, ip).
 *
 *   stasis-net plug PID HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]
 *       In the network namespace of PID (the sandbox's process 1): IPv6 off (before any interface
 *       exists there, so none gets a link-local address), loopback up, and a veth pair whose host
 *       end HOST_IF gets GATEWAY/PREFIX and whose other end becomes eth0 inside with
 *       ADDRESS/PREFIX (and INHERITED/32: a fork keeps its parent's address for the connections
 *       its processes had) and a default route via GATEWAY. Idempotent: a HOST_IF left from an
 *       earlier try is deleted first.
 *
 *       PID may be the path of a network namespace instead (gVisor's sandboxes: see netns).
 *
 *   stasis-net netns PATH
 *       A new network namespace, held by a bind mount at PATH (a new file): gVisor's sentry takes
 *       its interfaces from the namespace it starts in, so they are plugged before it starts.
 *
 *   stasis-net netns-plug PATH HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]
 *       Both of the above in one process: a new namespace bound at PATH, plugged.
 *
 *   stasis-net release PATH
 *       PATH unmounted (lazily) and removed, if there; the namespace lives on while a process is in it.
 *
 *   stasis-net sysnet-masked PROGRAM [ARGS...]
 *       PROGRAM run in a private mount namespace with an empty tmpfs over /proc/sys/net: runsc
 *       refuses to start or restore a networked sandbox where it sees the host's (PLATFORM facts
 *       in docs/HOST.md); what it starts keeps the private namespace.
 *
 *   stasis-net restore-hook [HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]]
 *       runc's prestart hook in a restore (the container's state, with its pid, on stdin): once
 *       CRIU has made the namespaces, before any socket comes back, loopback up in the restored
 *       sandbox and, with arguments, the plug above. It was CRIU's action script, which CRIU runs
 *       at each of seven steps of a restore (five with nothing to do: a fork of CRIU each).
 *
 * Exit status 0 on success; otherwise 1 with one line on stderr naming the step and errno.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stasis-ahead.h"

#define MAX_ARGS 8

static void fail(const char *step, const char *what) {
    fprintf(stderr, "stasis-net: %s%s%s: %s\n", step, what ? " " : "", what ? what : "", strerror(errno));
    exit(1);
}

/* ---- rtnetlink -------------------------------------------------------------------------------- */

struct request {
    struct nlmsghdr header;
    char body[1024];
};

static unsigned sequence;

static struct rtattr *attr_at(struct request *r) {
    return (struct rtattr *)((char *)&r->header + NLMSG_ALIGN(r->header.nlmsg_len));
}

static struct rtattr *add_attr(struct request *r, unsigned short type, const void *data, size_t len) {
    struct rtattr *a = attr_at(r);
    if (NLMSG_ALIGN(r->header.nlmsg_len) + RTA_SPACE(len) > sizeof *r) {
        errno = E2BIG;
        fail("building", "a netlink request");
    }
    a->rta_type = type;
    a->rta_len = RTA_LENGTH(len);
    if (len) memcpy(RTA_DATA(a), data, len);
    r->header.nlmsg_len = NLMSG_ALIGN(r->header.nlmsg_len) + RTA_SPACE(len);
    return a;
}

static struct rtattr *open_nest(struct request *r, unsigned short type) {
    return add_attr(r, type, NULL, 0);
}

static void close_nest(struct request *r, struct rtattr *nest) {
    nest->rta_len = (unsigned short)((char *)attr_at(r) - (char *)nest);
}

static void *add_body(struct request *r, size_t len) {
    void *body = (char *)&r->header + NLMSG_ALIGN(r->header.nlmsg_len);
    memset(body, 0, len);
    r->header.nlmsg_len = NLMSG_ALIGN(r->header.nlmsg_len) + NLMSG_ALIGN(len);
    return body;
}

static void begin(struct request *r, unsigned short type, unsigned short flags) {
    memset(r, 0, sizeof *r);
    r->header.nlmsg_len = NLMSG_HDRLEN;
    r->header.nlmsg_type = type;
    r->header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
    r->header.nlmsg_seq = ++sequence;
}

static int open_netlink(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) fail("opening", "a netlink socket");
    return fd;
}

/* Sends the request and waits for its acknowledgement; returns 0 or the kernel's errno. */
static int talk(int fd, struct request *r) {
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &r->header, r->header.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) fail("sending", "a netlink request");
    char reply[8192];
    for (;;) {
        ssize_t n = recv(fd, reply, sizeof reply, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("receiving", "a netlink reply");
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != r->header.nlmsg_seq || h->nlmsg_type != NLMSG_ERROR) continue;
            struct nlmsgerr *e = NLMSG_DATA(h);
            return -e->error;
        }
    }
}

static void must(int fd, struct request *r, const char *step, const char *what) {
    int err = talk(fd, r);
    if (err) {
        errno = err;
        fail(step, what);
    }
}

static int index_of(const char *name, const char *step) {
    unsigned index = if_nametoindex(name);
    if (!index) fail(step, name);
    return (int)index;
}

static void link_up(int fd, int index, const char *name) {
    struct request r;
    begin(&r, RTM_NEWLINK, 0);
    struct ifinfomsg *info = add_body(&r, sizeof *info);
    info->ifi_family = AF_UNSPEC;
    info->ifi_index = index;
    info->ifi_flags = IFF_UP;
    info->ifi_change = IFF_UP;
    must(fd, &r, "bringing up", name);
}

static struct in_addr ipv4(const char *text) {
    struct in_addr a;
    if (inet_pton(AF_INET, text, &a) != 1) {
        errno = EINVAL;
        fail("parsing", text);
    }
    return a;
}

static void add_address(int fd, int index, const char *address, int prefix, const char *name) {
    struct in_addr a = ipv4(address);
    struct request r;
    begin(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE);
    struct ifaddrmsg *msg = add_body(&r, sizeof *msg);
    msg->ifa_family = AF_INET;
    msg->ifa_prefixlen = (unsigned char)prefix;
    msg->ifa_index = (unsigned)index;
    add_attr(&r, IFA_LOCAL, &a, sizeof a);
    add_attr(&r, IFA_ADDRESS, &a, sizeof a);
    must(fd, &r, "adding an address to", name);
}

static void add_default_route(int fd, int index, const char *gateway) {
    struct in_addr g = ipv4(gateway);
    struct request r;
    begin(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE);
    struct rtmsg *msg = add_body(&r, sizeof *msg);
    msg->rtm_family = AF_INET;
    msg->rtm_table = RT_TABLE_MAIN;
    msg->rtm_protocol = RTPROT_BOOT;
    msg->rtm_scope = RT_SCOPE_UNIVERSE;
    msg->rtm_type = RTN_UNICAST;
    add_attr(&r, RTA_GATEWAY, &g, sizeof g);
    add_attr(&r, RTA_OIF, &index, sizeof index);
    must(fd, &r, "adding the default route via", gateway);
}

static void delete_link(int fd, const char *name) {
    struct request r;
    begin(&r, RTM_DELLINK, 0);
    struct ifinfomsg *info = add_body(&r, sizeof *info);
    info->ifi_family = AF_UNSPEC;
    add_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
    int err = talk(fd, &r);
    if (err && err != ENODEV) {
        errno = err;
        fail("deleting", name);
    }
}

/* A veth pair: HOST_IF here, its peer eth0 in the namespace behind netns_fd. */
static void add_veth(int fd, const char *host_if, int netns_fd) {
    struct request r;
    begin(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
    struct ifinfomsg *info = add_body(&r, sizeof *info);
    info->ifi_family = AF_UNSPEC;
    add_attr(&r, IFLA_IFNAME, host_if, strlen(host_if) + 1);
    struct rtattr *linkinfo = open_nest(&r, IFLA_LINKINFO);
    add_attr(&r, IFLA_INFO_KIND, "veth", sizeof "veth");
    struct rtattr *data = open_nest(&r, IFLA_INFO_DATA);
    struct rtattr *peer = open_nest(&r, VETH_INFO_PEER);
    struct ifinfomsg *peer_info = add_body(&r, sizeof *peer_info);
    peer_info->ifi_family = AF_UNSPEC;
    add_attr(&r, IFLA_IFNAME, "eth0", sizeof "eth0");
    add_attr(&r, IFLA_NET_NS_FD, &netns_fd, sizeof netns_fd);
    close_nest(&r, peer);
    close_nest(&r, data);
    close_nest(&r, linkinfo);
    must(fd, &r, "creating the veth pair", host_if);
}

/* ---- namespaces ------------------------------------------------------------------------------- */

/* The namespace of a pid, or the network namespace bound at an absolute path. */
static int open_namespace(const char *pid, const char *kind) {
    char path[4096];
    if (pid[0] == '/') snprintf(path, sizeof path, "%s", pid);
    else snprintf(path, sizeof path, "/proc/%s/ns/%s", pid, kind);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("opening", path);
    return fd;
}

static void write_sysctl(const char *path) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("opening", path);
    if (write(fd, "1", 1) != 1) fail("writing", path);
    close(fd);
}

static void enter(int ns_fd, const char *which) {
    if (setns(ns_fd, CLONE_NEWNET) != 0) fail("entering the network namespace of", which);
}

/* Loopback up in the current network namespace. */
static void loopback_up(void) {
    int fd = open_netlink();
    link_up(fd, index_of("lo", "finding"), "lo");
    close(fd);
}

/*
 * Each step runs in the namespace it concerns, entered with setns (this process has one thread):
 * interface names and netlink sockets belong to the namespace they were looked up or made in.
 */
static void plug(int argc, char **argv) {
    if (argc < 6 || argc > 7) {
        fprintf(stderr, "usage: stasis-net plug PID HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]\n");
        exit(2);
    }
    const char *pid = argv[1], *host_if = argv[2], *gateway = argv[3], *address = argv[4];
    const char *inherited = argc == 7 ? argv[6] : NULL;
    int prefix = atoi(argv[5]);
    if (prefix < 1 || prefix > 32 || strlen(host_if) >= IFNAMSIZ) {
        errno = EINVAL;
        fail("checking", "the arguments");
    }
    int host_ns = open_namespace("self", "net");
    int sandbox_ns = open_namespace(pid, "net");

    enter(sandbox_ns, pid);
    write_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6");
    write_sysctl("/proc/sys/net/ipv6/conf/all/disable_ipv6");
    loopback_up();

    enter(host_ns, "the host");
    int host = open_netlink();
    delete_link(host, host_if);
    add_veth(host, host_if, sandbox_ns);
    int host_index = index_of(host_if, "finding");
    add_address(host, host_index, gateway, prefix, host_if);
    link_up(host, host_index, host_if);
    close(host);

    enter(sandbox_ns, pid);
    int inside = open_netlink();
    int eth0 = index_of("eth0", "finding");
    add_address(inside, eth0, address, prefix, "eth0");
    if (inherited) add_address(inside, eth0, inherited, 32, "eth0");
    link_up(inside, eth0, "eth0");
    add_default_route(inside, eth0, gateway);
    close(inside);
    close(sandbox_ns);
    close(host_ns);
}

static void new_netns(const char *path) {
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) fail("creating", path);
    close(fd);
    if (unshare(CLONE_NEWNET) != 0) fail("making a network namespace for", path);
    if (mount("/proc/self/ns/net", path, NULL, MS_BIND, NULL) != 0) {
        int saved = errno;
        unlink(path);
        errno = saved;
        fail("binding the network namespace at", path);
    }
}

/* netns and plug in one process (argv: netns-plug PATH HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]). */
static void new_netns_plugged(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: stasis-net netns-plug PATH HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]\n");
        exit(2);
    }
    int host_ns = open_namespace("self", "net");
    new_netns(argv[1]);
    enter(host_ns, "the host");
    close(host_ns);
    plug(argc, argv);
}

static void release_netns(const char *path) {
    if (umount2(path, MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) fail("unmounting", path);
    if (unlink(path) != 0 && errno != ENOENT) fail("removing", path);
}

static void sysnet_masked(char **argv) {
    if (unshare(CLONE_NEWNS) != 0) fail("making", "a mount namespace");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) fail("making private", "the mounts");
    if (mount("stasis-sysnet", "/proc/sys/net", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k,mode=0555") != 0)
        fail("mounting a tmpfs over", "/proc/sys/net");
    execv(argv[0], argv);
    fail("running", argv[0]);
}

/*
 * runc's prestart hook in a restore: runc runs it once CRIU has made the sandbox's namespaces,
 * before any socket comes back, with the container's state (JSON, its "pid") on stdin.
 */
static void restore_hook(int argc, char **argv) {
    char state[8192];
    size_t len = 0;
    ssize_t got;
    while (len < sizeof state - 1 && (got = read(STDIN_FILENO, state + len, sizeof state - 1 - len)) != 0) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail("reading", "the container's state");
        len += (size_t)got;
    }
    state[len] = '\0';
    const char *field = strstr(state, "\"pid\":");
    char pid[16];
    if (!field || sscanf(field + 6, " %15[0-9]", pid) != 1 || !strcmp(pid, "0")) {
        errno = EINVAL;
        fail("finding the pid in", "the container's state");
    }
    if (argc > 0) {
        char *args[MAX_ARGS] = {"plug", pid};
        int n = 2;
        for (int i = 0; i < argc && n < MAX_ARGS; i++) args[n++] = argv[i];
        plug(n, args);
    } else {
        enter(open_namespace(pid, "net"), pid);
        loopback_up();
    }
}

int main(int argc, char **argv) {
    ahead_take_arguments(argc, argv); /* the service keeps one started ahead for plug, netns-plug and release */
    if (argc >= 2 && !strcmp(argv[1], "plug")) {
        plug(argc - 1, argv + 1);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "netns")) {
        new_netns(argv[2]);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "netns-plug")) {
        new_netns_plugged(argc - 1, argv + 1);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "release")) {
        release_netns(argv[2]);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "sysnet-masked")) sysnet_masked(argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "restore-hook")) {
        restore_hook(argc - 2, argv + 2);
        return 0;
    }
    fprintf(stderr, "stasis-net: unknown command; see the comment at the top of stasis-net.c\n");
    return 2;
}
