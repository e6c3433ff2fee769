package io.stasis.server.s3;

import io.stasis.core.files.SandboxPath;

/** Object keys as paths inside a volume. */
final class S3Keys {
    private S3Keys() {
    }

    /** The key as a path inside the volume: plain segments only. */
    static SandboxPath path(String key) {
        if (key.isEmpty() || key.length() > 1024) throw new S3Error(400, "InvalidArgument", "a key is 1 to 1024 characters");
        if (key.startsWith("/") || key.indexOf('\0') >= 0) throw new S3Error(400, "InvalidArgument", "a key must not start with '/' or hold NUL");
        String[] segments = key.split("/", -1);
        for (int i = 0; i < segments.length; i++) {
            String s = segments[i];
            boolean trailingEmpty = i == segments.length - 1 && s.isEmpty();
            if (!trailingEmpty && (s.isEmpty() || s.equals(".") || s.equals("..")))
                throw new S3Error(400, "InvalidArgument", "a key's segments must not be empty, '.' or '..': '" + key + "'");
        }
        return new SandboxPath("/" + key);
    }
}
