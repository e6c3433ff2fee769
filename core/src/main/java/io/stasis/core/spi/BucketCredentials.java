package io.stasis.core.spi;

import io.stasis.core.error.StasisException;

/**
 * An S3 access key for a bucket mount. {@link #toString()} never shows the secret, so the record
 * can be logged and put in exception messages as it is; the secret leaves the service only in a
 * file readable by root alone (see {@link BucketMounts}).
 *
 * @param accessKeyId     the key id, printable ASCII without spaces
 * @param secretAccessKey the secret, printable ASCII (no control characters: they could not be
 *                        passed to the FUSE client unchanged)
 */
public record BucketCredentials(String accessKeyId, String secretAccessKey) {
    public BucketCredentials {
        if (accessKeyId == null || accessKeyId.isEmpty() || !visible(accessKeyId, false) || accessKeyId.length() > 256)
            throw StasisException.invalid("mounts.credentials.accessKeyId", "must be 1 to 256 printable ASCII characters without spaces");
        if (secretAccessKey == null || secretAccessKey.isEmpty() || !visible(secretAccessKey, true) || secretAccessKey.length() > 1024)
            throw StasisException.invalid("mounts.credentials.secretAccessKey", "must be 1 to 1024 printable ASCII characters");
    }

    /**
     * Reads the value of a tenant secret named by a mount's {@code credentialsSecret}:
     * {@code ACCESS_KEY_ID:SECRET_ACCESS_KEY}, split at the first colon (the format of s3fs's
     * passwd file; neither part of an AWS key contains a colon). A trailing newline is ignored.
     * The message of a bad value names the secret, never its content.
     */
    public static BucketCredentials fromSecretValue(String secretName, String value) {
        String v = value == null ? "" : value.endsWith("\r\n") ? value.substring(0, value.length() - 2)
                : value.endsWith("\n") ? value.substring(0, value.length() - 1) : value;
        int colon = v.indexOf(':');
        if (colon <= 0 || colon == v.length() - 1)
            throw StasisException.invalid("mounts.credentialsSecret", "secret '" + secretName
                    + "' must hold ACCESS_KEY_ID:SECRET_ACCESS_KEY");
        try {
            return new BucketCredentials(v.substring(0, colon), v.substring(colon + 1));
        } catch (StasisException e) {
            throw StasisException.invalid("mounts.credentialsSecret", "secret '" + secretName + "' must hold ACCESS_KEY_ID:SECRET_ACCESS_KEY ("
                    + e.getMessage() + ")");
        }
    }

    private static boolean visible(String s, boolean spaceAllowed) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c > 0x7e || c < 0x20 || c == ' ' && !spaceAllowed) return false;
        }
        // leading or trailing blanks would be trimmed by an INI reader: refuse them rather than change the secret
        return s.strip().length() == s.length();
    }

    @Override
    public String toString() {
        return "BucketCredentials[accessKeyId=" + accessKeyId + ", secretAccessKey=***]";
    }
}
