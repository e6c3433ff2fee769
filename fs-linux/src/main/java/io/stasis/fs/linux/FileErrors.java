package io.stasis.fs.linux;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.LinkedHashMap;

/**
 * Turns a failed system call into the API's error, naming only the path as the sandbox sees it
 * (a host path must never reach a caller).
 */
final class FileErrors {
    private FileErrors() {
    }

    /** @param path the sandbox path of the request, as shown to the caller */
    static StasisException map(LinuxException e, String path) {
        var details = new LinkedHashMap<String, Object>();
        details.put("path", path);
        details.put("errno", e.errnoName());
        String problem = e.problem().orElse(null);
        return switch (e.errno()) {
            case Errno.ENOENT -> new StasisException(ErrorCode.FILE_NOT_FOUND, "no such file or directory: " + path, details, e);
            case Errno.EEXIST -> new StasisException(ErrorCode.FILE_EXISTS,
                    "file exists: " + path + (problem == null ? "" : " (" + problem + ")"), details, e);
            case Errno.ENOTDIR -> new StasisException(ErrorCode.NOT_A_DIRECTORY, "not a directory: " + path, details, e);
            case Errno.EISDIR -> new StasisException(ErrorCode.IS_A_DIRECTORY, "is a directory: " + path, details, e);
            case Errno.ENOTEMPTY -> new StasisException(ErrorCode.DIRECTORY_NOT_EMPTY,
                    "directory not empty: " + path + (problem == null ? "" : " (" + problem + ")"), details, e);
            case Errno.EXDEV -> new StasisException(ErrorCode.INVALID_REQUEST,
                    "cannot move across filesystems or mounts inside the sandbox: " + path, details, e);
            case Errno.ELOOP -> new StasisException(ErrorCode.INVALID_REQUEST,
                    (problem != null ? problem : "too many levels of symbolic links, or a /proc magic link") + ": " + path, details, e);
            case Errno.ENAMETOOLONG -> new StasisException(ErrorCode.INVALID_REQUEST, "file name too long: " + path, details, e);
            case Errno.ENOSPC, Errno.EDQUOT -> new StasisException(ErrorCode.QUOTA_EXCEEDED,
                    "no space left in the sandbox's filesystem: " + path, details, e);
            case Errno.EPERM, Errno.EACCES, Errno.EROFS -> new StasisException(ErrorCode.INVALID_REQUEST,
                    (problem != null ? problem : "operation not permitted") + ": " + path, details, e);
            case Errno.EINVAL, Errno.EBUSY, Errno.ENOTSOCK -> new StasisException(ErrorCode.INVALID_REQUEST,
                    (problem != null ? problem : "invalid operation") + ": " + path, details, e);
            default -> new StasisException(ErrorCode.INTERNAL,
                    e.syscall() + " failed with " + e.errnoName() + ": " + path, details, e);
        };
    }
}
