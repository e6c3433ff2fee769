package io.stasis.templates.oci;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.LinkedHashMap;
import java.util.Objects;

/**
 * Why an image could not be read, pulled or applied: the one exception this package throws
 * (besides {@link IllegalArgumentException} for a caller's wrong arguments). The message names
 * what was wrong (an archive entry, a blob digest, a registry URL); {@link #subject()} holds that
 * name for programs, and {@link #reason()} says what kind of failure it was.
 */
public final class ImageException extends RuntimeException {

    /** What kind of failure, and the API error each one becomes ({@link #toStasisException()}). */
    public enum Reason {
        /** Not a well-formed archive, manifest, config or layer: {@code invalid_request}. */
        MALFORMED(ErrorCode.INVALID_REQUEST),
        /** Well-formed, but uses something this importer does not handle (sparse files, sha512, another platform): {@code invalid_request}. */
        UNSUPPORTED(ErrorCode.INVALID_REQUEST),
        /** An entry that would escape the root or that a sandbox may not have (a device node, an id out of range): {@code invalid_request}. */
        REFUSED(ErrorCode.INVALID_REQUEST),
        /** A blob or manifest whose content does not hash to its digest: {@code invalid_request}. */
        DIGEST_MISMATCH(ErrorCode.INVALID_REQUEST),
        /** Over a size or count limit: {@code payload_too_large}. */
        TOO_LARGE(ErrorCode.PAYLOAD_TOO_LARGE),
        /** The registry has no such repository, tag or digest: {@code not_found}. */
        NOT_FOUND(ErrorCode.NOT_FOUND),
        /** The registry refused the credentials (or their absence): {@code invalid_request}, not our own 401. */
        UNAUTHORIZED(ErrorCode.INVALID_REQUEST),
        /** The registry could not be reached or failed (5xx, timeouts): {@code runtime_failed}. */
        UNAVAILABLE(ErrorCode.RUNTIME_FAILED),
        /** The host failed us (a full spool disk, a file that vanished): {@code runtime_failed}. */
        IO(ErrorCode.RUNTIME_FAILED);

        private final ErrorCode code;

        Reason(ErrorCode code) {
            this.code = code;
        }

        public ErrorCode errorCode() {
            return code;
        }
    }

    private final Reason reason;
    private final String subject;

    public ImageException(Reason reason, String subject, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason);
        this.subject = Objects.requireNonNull(subject);
    }

    public ImageException(Reason reason, String subject, String message) {
        this(reason, subject, message, null);
    }

    public Reason reason() {
        return reason;
    }

    /** What the failure is about: an entry's path, a blob's digest, an image reference, a URL. */
    public String subject() {
        return subject;
    }

    /** The API error: the reason's code, this message, and the reason and subject as details. */
    public StasisException toStasisException() {
        var details = new LinkedHashMap<String, Object>();
        details.put("reason", reason.name().toLowerCase(java.util.Locale.ROOT));
        details.put("subject", subject);
        return new StasisException(reason.errorCode(), getMessage(), details, this);
    }

    static ImageException malformed(String subject, String problem) {
        return new ImageException(Reason.MALFORMED, subject, subject + ": " + problem);
    }

    static ImageException malformed(String subject, String problem, Throwable cause) {
        return new ImageException(Reason.MALFORMED, subject, subject + ": " + problem, cause);
    }

    static ImageException unsupported(String subject, String problem) {
        return new ImageException(Reason.UNSUPPORTED, subject, subject + ": " + problem);
    }

    static ImageException refused(String subject, String problem) {
        return new ImageException(Reason.REFUSED, subject, subject + ": " + problem);
    }

    static ImageException tooLarge(String subject, String problem) {
        return new ImageException(Reason.TOO_LARGE, subject, subject + ": " + problem);
    }

    static ImageException io(String subject, String problem, Throwable cause) {
        return new ImageException(Reason.IO, subject, subject + ": " + problem, cause);
    }
}
