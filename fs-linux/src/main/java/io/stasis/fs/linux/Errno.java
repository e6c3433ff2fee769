package io.stasis.fs.linux;

import java.util.Map;

/** Linux errno values (x86_64 and aarch64 share them) that the file layer tells apart, and their names. */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int EXDEV = 18;
    public static final int ENODEV = 19;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int ENFILE = 23;
    public static final int EMFILE = 24;
    public static final int ETXTBSY = 26;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int ESPIPE = 29;
    public static final int EROFS = 30;
    public static final int EMLINK = 31;
    public static final int EPIPE = 32;
    public static final int ERANGE = 34;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOSYS = 38;
    public static final int ENOTEMPTY = 39;
    public static final int ELOOP = 40;
    public static final int EOVERFLOW = 75;
    public static final int ENOTSOCK = 88;
    public static final int EOPNOTSUPP = 95;
    public static final int ECONNREFUSED = 111;
    public static final int EDQUOT = 122;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(EPERM, "EPERM"), Map.entry(ENOENT, "ENOENT"), Map.entry(EINTR, "EINTR"),
            Map.entry(EIO, "EIO"), Map.entry(ENXIO, "ENXIO"), Map.entry(EBADF, "EBADF"),
            Map.entry(EAGAIN, "EAGAIN"), Map.entry(ENOMEM, "ENOMEM"), Map.entry(EACCES, "EACCES"),
            Map.entry(EFAULT, "EFAULT"), Map.entry(EBUSY, "EBUSY"), Map.entry(EEXIST, "EEXIST"),
            Map.entry(EXDEV, "EXDEV"), Map.entry(ENODEV, "ENODEV"), Map.entry(ENOTDIR, "ENOTDIR"),
            Map.entry(EISDIR, "EISDIR"), Map.entry(EINVAL, "EINVAL"), Map.entry(ENFILE, "ENFILE"),
            Map.entry(EMFILE, "EMFILE"), Map.entry(ETXTBSY, "ETXTBSY"), Map.entry(EFBIG, "EFBIG"),
            Map.entry(ENOSPC, "ENOSPC"), Map.entry(ESPIPE, "ESPIPE"), Map.entry(EROFS, "EROFS"),
            Map.entry(EMLINK, "EMLINK"), Map.entry(EPIPE, "EPIPE"), Map.entry(ERANGE, "ERANGE"),
            Map.entry(ENAMETOOLONG, "ENAMETOOLONG"), Map.entry(ENOSYS, "ENOSYS"),
            Map.entry(ENOTEMPTY, "ENOTEMPTY"), Map.entry(ELOOP, "ELOOP"), Map.entry(EOVERFLOW, "EOVERFLOW"),
            Map.entry(ENOTSOCK, "ENOTSOCK"), Map.entry(EOPNOTSUPP, "EOPNOTSUPP"),
            Map.entry(ECONNREFUSED, "ECONNREFUSED"), Map.entry(EDQUOT, "EDQUOT"));

    private Errno() {
    }

    /** The symbolic name, e.g. {@code ENOENT}; {@code errno 123} for one this table does not know. */
    public static String name(int errno) {
        return NAMES.getOrDefault(errno, "errno " + errno);
    }
}
