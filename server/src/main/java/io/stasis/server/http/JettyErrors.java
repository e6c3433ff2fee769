package io.stasis.server.http;

import io.stasis.core.error.StasisException;
import io.stasis.server.error.ErrorBody;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors that Jetty answers itself, before a request reaches a route: a URI with an encoded NUL
 * or invalid UTF-8, an ambiguous path, headers past the limit, a request line it cannot parse.
 * They get the API's error envelope and a request id like every other error, not Jetty's HTML
 * page or an empty body.
 */
final class JettyErrors extends ErrorHandler {
    /** Every method gets the body (Jetty's default writes one for GET, POST and HEAD only). */
    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        String id = RequestIds.next();
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(RequestIds.HEADER, id);
        // Jetty closes a connection whose request it refused this early: say so, or a client reuses it and finds it gone.
        if (code == HttpStatus.BAD_REQUEST_400) response.getHeaders().put(HttpHeader.CONNECTION, "close");
        response.write(true, ByteBuffer.wrap(body(code, message)), callback);
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(HttpHeader.CONTENT_TYPE, "application/json");
        fields.put(RequestIds.HEADER, RequestIds.next());
        return ByteBuffer.wrap(body(status, reason));
    }

    private static byte[] body(int status, String reason) {
        String what = reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason;
        var error = new StasisException(HttpApi.codeFor(status), "the request was refused before any route: " + what, Map.of());
        return Json.write(ErrorBody.of(error)).getBytes(StandardCharsets.UTF_8);
    }
}
