package io.stasis.cli;

import io.stasis.sdk.ConflictException;
import io.stasis.sdk.ForbiddenException;
import io.stasis.sdk.InvalidRequestException;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.PayloadTooLargeException;
import io.stasis.sdk.QuotaExceededException;
import io.stasis.sdk.ServerErrorException;
import io.stasis.sdk.ServiceUnavailableException;
import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.UnauthenticatedException;

/**
 * The process exit codes of {@code stasis}: one per kind of failure, so that a script can tell
 * "not there" from "not now" from "not allowed". {@code exec}, {@code shell}, {@code wait} and
 * {@code logs -f} exit with the command's own code instead. The {@code stasis --help} footer
 * (on {@link StasisCommand}) and the README list them.
 */
final class ExitCodes {
    static final int OK = 0;
    /** A failure with no code of its own: a local file could not be read or written, an unexpected server answer. */
    static final int ERROR = 1;
    /** Bad arguments or configuration (picocli's usage code). */
    static final int USAGE = 2;
    /** The server could not be reached, or did not answer in time. */
    static final int CANNOT_CONNECT = 3;
    /** 404: no such sandbox, checkpoint, process, file, preview or secret. */
    static final int NOT_FOUND = 4;
    /** 409: the sandbox is in the wrong state for the call, or the name or path is taken. */
    static final int CONFLICT = 5;
    /** 400, 413, 422: the server rejected the request's content. */
    static final int INVALID_REQUEST = 6;
    /** 401, 403: the API key is wrong, or may not do this. */
    static final int UNAUTHORIZED = 7;
    /** 429, 503: a quota is used up or the host is busy; the same call may succeed later. */
    static final int BUSY = 8;
    /** 500: the server failed (runtime_failed, internal). */
    static final int SERVER_FAILED = 9;
    /** {@code exec}: the command hit its timeout (as coreutils' timeout(1)). */
    static final int TIMED_OUT = 124;

    private ExitCodes() {
    }

    /** The exit code of a call the server refused; "error: <code>: <message>" goes to stderr. */
    static int of(StasisApiException e) {
        return switch (e) {
            case NotFoundException _ -> NOT_FOUND;
            case ConflictException _ -> CONFLICT;
            case InvalidRequestException _, PayloadTooLargeException _ -> INVALID_REQUEST;
            case UnauthenticatedException _, ForbiddenException _ -> UNAUTHORIZED;
            case QuotaExceededException _, ServiceUnavailableException _ -> BUSY;
            case ServerErrorException _ -> SERVER_FAILED;
            default -> ERROR;
        };
    }
}
