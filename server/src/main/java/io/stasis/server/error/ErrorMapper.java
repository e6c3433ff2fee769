package io.stasis.server.error;

import io.stasis.core.error.ErrorCode;

/** The HTTP status of every error code. Exhaustive: a new code does not compile until it has one. */
public final class ErrorMapper {
    private ErrorMapper() {
    }

    public static int status(ErrorCode code) {
        return switch (code) {
            case MALFORMED_REQUEST -> 400;
            case UNAUTHENTICATED -> 401;
            case FORBIDDEN -> 403;
            case NOT_FOUND, SANDBOX_NOT_FOUND, FILE_NOT_FOUND, CHECKPOINT_NOT_FOUND, PROCESS_NOT_FOUND, PREVIEW_NOT_FOUND, SECRET_NOT_FOUND,
                 TENANT_NOT_FOUND, KEY_NOT_FOUND, TOKEN_NOT_FOUND, VOLUME_NOT_FOUND, VOLUME_SNAPSHOT_NOT_FOUND, VOLUME_SYNC_NOT_FOUND -> 404;
            case INVALID_STATE, CHECKPOINT_UNSUPPORTED, GENERATION_MISMATCH, NAME_TAKEN, TEMPLATE_IN_USE, FILE_EXISTS, DIRECTORY_NOT_EMPTY, STORE_BUSY -> 409;
            case PAYLOAD_TOO_LARGE -> 413;
            case INVALID_REQUEST, BUCKET_MOUNT_FAILED, TEMPLATE_NOT_FOUND, NOT_A_DIRECTORY, IS_A_DIRECTORY -> 422;
            case QUOTA_EXCEEDED, RATE_LIMITED -> 429;
            case HOST_BUSY, TEMPLATE_UNAVAILABLE, NODE_UNAVAILABLE -> 503;
            case RUNTIME_FAILED, INTERNAL -> 500;
        };
    }
}
