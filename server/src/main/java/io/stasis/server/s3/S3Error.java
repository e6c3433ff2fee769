package io.stasis.server.s3;

import io.stasis.core.error.StasisException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An S3 error answer: its HTTP status and S3 error code. */
final class S3Error extends RuntimeException {
    private static final Logger log = LoggerFactory.getLogger(S3Error.class);

    final int status;
    final String code;

    S3Error(int status, String code, String message) {
        super(message);
        this.status = status;
        this.code = code;
    }

    /** What an error of the service is in S3's terms. */
    static S3Error from(StasisException e) {
        return switch (e.code()) {
            case VOLUME_NOT_FOUND -> new S3Error(404, "NoSuchBucket", e.getMessage());
            case FILE_NOT_FOUND, IS_A_DIRECTORY, NOT_A_DIRECTORY -> new S3Error(404, "NoSuchKey", e.getMessage());
            case UNAUTHENTICATED -> new S3Error(403, "InvalidAccessKeyId", e.getMessage());
            case FORBIDDEN -> new S3Error(403, "AccessDenied", e.getMessage());
            case QUOTA_EXCEEDED -> new S3Error(507, "InsufficientStorage", e.getMessage());
            case PAYLOAD_TOO_LARGE -> new S3Error(400, "EntityTooLarge", e.getMessage());
            case INVALID_REQUEST, MALFORMED_REQUEST, FILE_EXISTS, DIRECTORY_NOT_EMPTY -> new S3Error(400, "InvalidArgument", e.getMessage());
            default -> {
                log.atWarn().addKeyValue("code", e.code().wireName()).setCause(e).log("S3 request failed");
                yield new S3Error(500, "InternalError", e.getMessage());
            }
        };
    }
}
