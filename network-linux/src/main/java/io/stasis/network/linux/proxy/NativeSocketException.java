package io.stasis.network.linux.proxy;

import java.io.IOException;

/** A socket system call failed: the call, the errno and what it was applied to. */
final class NativeSocketException extends IOException {
    private final int errno;

    NativeSocketException(String call, int errno, String target) {
        super(call + " failed with errno " + errno + " on " + target);
        this.errno = errno;
    }

    int errno() {
        return errno;
    }
}
