package io.stasis.network.linux.nflog;

import java.io.IOException;

/** A netlink system call failed, or the kernel refused a request: what was asked and the errno. */
final class NetlinkException extends IOException {
    static final int EPERM = 1;
    static final int EBUSY = 16;
    /** The socket's receive queue overflowed: messages were lost, the socket still works. */
    static final int ENOBUFS = 105;

    private final int errno;

    NetlinkException(String what, int errno) {
        super(what + " failed with errno " + errno);
        this.errno = errno;
    }

    int errno() {
        return errno;
    }
}
