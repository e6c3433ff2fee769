package io.stasis.core.error;

import java.util.Locale;

/**
 * Every error the API can return. The snake_case wire name of a code never changes once
 * released; the HTTP status for each code is chosen by the server's {@code ErrorMapper}.
 */
public enum ErrorCode {
    MALFORMED_REQUEST,
    UNAUTHENTICATED,
    FORBIDDEN,
    NOT_FOUND,
    SANDBOX_NOT_FOUND,
    TEMPLATE_NOT_FOUND,
    FILE_NOT_FOUND,
    CHECKPOINT_NOT_FOUND,
    PROCESS_NOT_FOUND,
    PREVIEW_NOT_FOUND,
    SECRET_NOT_FOUND,
    TENANT_NOT_FOUND,
    KEY_NOT_FOUND,
    TOKEN_NOT_FOUND,
    VOLUME_NOT_FOUND,
    VOLUME_SNAPSHOT_NOT_FOUND,
    VOLUME_SYNC_NOT_FOUND,
    INVALID_STATE,
    /** The sandbox runs something CRIU cannot checkpoint right now; it keeps running untouched. */
    CHECKPOINT_UNSUPPORTED,
    /** A resume with {@code expectGeneration} found the sandbox at an older generation than the caller had seen. */
    GENERATION_MISMATCH,
    NAME_TAKEN,
    /** A template that sandboxes were made from, which they still need to be deleted first. */
    TEMPLATE_IN_USE,
    FILE_EXISTS,
    NOT_A_DIRECTORY,
    IS_A_DIRECTORY,
    DIRECTORY_NOT_EMPTY,
    PAYLOAD_TOO_LARGE,
    INVALID_REQUEST,
    /** A bucket of a sandbox's {@code mounts} could not be mounted: the endpoint, key, bucket or prefix was refused or unreachable. */
    BUCKET_MOUNT_FAILED,
    QUOTA_EXCEEDED,
    /** Too many calls of a credential or a tenant, or creates of a tenant, for its rate: try again after {@code Retry-After}. */
    RATE_LIMITED,
    HOST_BUSY,
    /** The blob store is held by another instance's garbage collection or uploads; try again later. */
    STORE_BUSY,
    TEMPLATE_UNAVAILABLE,
    /** The sandbox is on another node sharing the catalog, whose lease has lapsed: it answers again when that node is back. */
    NODE_UNAVAILABLE,
    RUNTIME_FAILED,
    INTERNAL;

    /** The stable name on the wire, e.g. {@code sandbox_not_found}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
