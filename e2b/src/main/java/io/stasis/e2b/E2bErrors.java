package io.stasis.e2b;

import io.stasis.e2b.ConnectRpc.Code;
import io.stasis.e2b.ConnectRpc.RpcException;
import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisClientException;
import io.stasis.sdk.StasisConnectionException;
import io.stasis.sdk.StasisTimeoutException;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;

/**
 * Stasis's errors as the e2b SDKs read them: on the control plane and envd's HTTP routes
 * {@code {"code": <status>, "message"}} with the status the SDK maps to its own exceptions (400
 * invalid argument, 401 authentication, 404 not found, 409 conflict, 429 rate limit, 502 the
 * sandbox is gone); on envd's Connect calls the Connect code of the same meaning.
 */
final class E2bErrors {
    private E2bErrors() {
    }

    /** An error of the E2B protocol itself (a request the SDKs would not send), with its HTTP status. */
    static final class E2bException extends RuntimeException {
        final int status;

        E2bException(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /** The HTTP status an E2B client expects for a failed call of the Stasis API. */
    static int statusOf(StasisClientException e) {
        if (e instanceof StasisApiException api) {
            return switch (api.status()) {
                case 400, 413, 422 -> 400;
                case 401, 403, 404, 409, 429 -> api.status();
                case 503 -> api.code().equals("host_busy") ? 429 : 502;
                default -> 500;
            };
        }
        return e instanceof StasisConnectionException || e instanceof StasisTimeoutException ? 502 : 500;
    }

    static String messageOf(StasisClientException e) {
        return e instanceof StasisApiException api ? api.code() + ": " + api.errorMessage() : e.getMessage();
    }

    static void write(HttpServletResponse response, int status, String message) throws IOException {
        ConnectRpc.writeJson(response, status, Map.of("code", status, "message", message == null ? "" : message));
    }

    /** The Connect error of the same meaning. */
    static RpcException toRpc(StasisClientException e) {
        if (e instanceof StasisApiException api) {
            Code code = switch (api.status()) {
                case 400, 422 -> Code.INVALID_ARGUMENT;
                case 401 -> Code.UNAUTHENTICATED;
                case 403 -> Code.PERMISSION_DENIED;
                case 404 -> Code.NOT_FOUND;
                case 409 -> api.code().equals("file_exists") ? Code.ALREADY_EXISTS : Code.FAILED_PRECONDITION;
                case 413, 429 -> Code.RESOURCE_EXHAUSTED;
                case 503 -> Code.UNAVAILABLE;
                default -> Code.INTERNAL;
            };
            return new RpcException(code, messageOf(e));
        }
        return new RpcException(e instanceof StasisConnectionException || e instanceof StasisTimeoutException ? Code.UNAVAILABLE : Code.INTERNAL,
                e.getMessage());
    }
}
