package io.stasis.fs.linux;

import java.util.Optional;

/**
 * A failed system call: which one, on which path (as passed to the call, or the sandbox path
 * for checks this module makes itself), and the errno. Callers map it to their own errors.
 */
public final class LinuxException extends RuntimeException {
    private final int errno;
    private final String syscall;
    private final String path;
    private final String problem;

    public LinuxException(int errno, String syscall, String path) {
        this(errno, syscall, path, null);
    }

    /** @param problem what went wrong when it is more precise than the errno (e.g. "not a regular file"), or null */
    public LinuxException(int errno, String syscall, String path, String problem) {
        super(syscall + "(" + path + "): " + Errno.name(errno) + (problem == null ? "" : " (" + problem + ")"));
        this.errno = errno;
        this.syscall = syscall;
        this.path = path;
        this.problem = problem;
    }

    public int errno() {
        return errno;
    }

    /** E.g. {@code ENOENT}. */
    public String errnoName() {
        return Errno.name(errno);
    }

    public String syscall() {
        return syscall;
    }

    public String path() {
        return path;
    }

    /** A more precise description than the errno, when this module raised it after a check. */
    public Optional<String> problem() {
        return Optional.ofNullable(problem);
    }

    public boolean is(int errno) {
        return this.errno == errno;
    }
}
