package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * The Connect protocol (connectrpc.com) as envd speaks it, with the JSON codec only: a unary call
 * is a POST of {@code application/json} answered by one JSON message (an error: its HTTP status and
 * {@code {"code", "message"}}); a server-streaming call sends one enveloped message
 * ({@code application/connect+json}: a flags byte, a 4-byte big-endian length, the JSON) and is
 * answered by enveloped messages, ended by one with flag {@value #END_STREAM} that carries the
 * error, if any. A client-streaming call sends enveloped messages until its request ends, and is
 * answered as a server-streaming one (one message, then the end).
 */
final class ConnectRpc {
    static final ObjectMapper JSON = new ObjectMapper();
    static final int END_STREAM = 0x02;
    private static final int COMPRESSED = 0x01;
    /** Larger than any request envd takes (file content goes through /files). */
    private static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

    private ConnectRpc() {
    }

    /** Connect's error codes, with the HTTP status a unary error is answered with. */
    enum Code {
        CANCELED(499), INVALID_ARGUMENT(400), DEADLINE_EXCEEDED(504), NOT_FOUND(404), ALREADY_EXISTS(409),
        PERMISSION_DENIED(403), RESOURCE_EXHAUSTED(429), FAILED_PRECONDITION(400), UNIMPLEMENTED(501), INTERNAL(500),
        UNAVAILABLE(503), UNAUTHENTICATED(401);

        final int httpStatus;

        Code(int httpStatus) {
            this.httpStatus = httpStatus;
        }

        String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** A call's failure, as the client's Connect library reads it. */
    static final class RpcException extends RuntimeException {
        final Code code;

        RpcException(Code code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** The call's deadline from its {@code Connect-Timeout-Ms} header, if it has one. */
    static Optional<Duration> deadline(HttpServletRequest request) {
        String header = request.getHeader("Connect-Timeout-Ms");
        if (header == null || header.isBlank()) return Optional.empty();
        try {
            long millis = Long.parseLong(header.strip());
            return millis > 0 ? Optional.of(Duration.ofMillis(millis)) : Optional.empty();
        } catch (NumberFormatException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Connect-Timeout-Ms is not a number: " + header);
        }
    }

    /** The request message of a unary call. */
    static JsonNode readUnary(HttpServletRequest request) throws IOException {
        try (InputStream in = request.getInputStream()) {
            byte[] body = in.readNBytes(MAX_MESSAGE_BYTES + 1);
            if (body.length > MAX_MESSAGE_BYTES) throw new RpcException(Code.RESOURCE_EXHAUSTED, "the message is larger than " + MAX_MESSAGE_BYTES + " bytes");
            return parse(body);
        }
    }

    /** The one request message of a server-streaming call. */
    static JsonNode readEnveloped(HttpServletRequest request) throws IOException {
        try (InputStream in = request.getInputStream()) {
            return parse(readEnvelope(in));
        }
    }

    /** The message of one envelope: a flags byte (compression refused), a 4-byte big-endian length, that many bytes. */
    static byte[] readEnvelope(InputStream stream) throws IOException {
        return nextEnvelope(stream).orElseThrow(() -> new RpcException(Code.INVALID_ARGUMENT, "the request has no enveloped message"));
    }

    /** Each message of a client-streaming call's request, read as the loop asks for it, until the request ends. */
    static Iterable<JsonNode> messages(InputStream stream) {
        return () -> new Iterator<>() {
            private Optional<byte[]> next;

            @Override
            public boolean hasNext() {
                try {
                    if (next == null) next = nextEnvelope(stream);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return next.isPresent();
            }

            @Override
            public JsonNode next() {
                if (!hasNext()) throw new NoSuchElementException();
                byte[] message = next.get();
                next = null;
                return parse(message);
            }
        };
    }

    /** The next envelope's message; empty when the request ends before one starts. */
    private static Optional<byte[]> nextEnvelope(InputStream stream) throws IOException {
        var in = new DataInputStream(stream);
        int flags = in.read();
        if (flags < 0) return Optional.empty();
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "the request's envelope is cut short");
        }
        if ((flags & COMPRESSED) != 0) throw new RpcException(Code.UNIMPLEMENTED, "compressed messages are not supported");
        if (length < 0 || length > MAX_MESSAGE_BYTES)
            throw new RpcException(Code.RESOURCE_EXHAUSTED, "the message is larger than " + MAX_MESSAGE_BYTES + " bytes");
        byte[] message = in.readNBytes(length);
        if (message.length < length) throw new RpcException(Code.INVALID_ARGUMENT, "the request's message is cut short");
        return Optional.of(message);
    }

    /** One envelope around {@code message}. */
    static byte[] envelope(int flags, byte[] message) {
        byte[] out = new byte[5 + message.length];
        out[0] = (byte) flags;
        out[1] = (byte) (message.length >>> 24);
        out[2] = (byte) (message.length >>> 16);
        out[3] = (byte) (message.length >>> 8);
        out[4] = (byte) message.length;
        System.arraycopy(message, 0, out, 5, message.length);
        return out;
    }

    static JsonNode parse(byte[] message) {
        if (message.length == 0) return JSON.createObjectNode();
        try {
            var node = JSON.readTree(message);
            if (node == null || !node.isObject()) throw new RpcException(Code.INVALID_ARGUMENT, "the message is not a JSON object");
            return node;
        } catch (IOException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "the message is not JSON: " + e.getMessage());
        }
    }

    /** Answers {@code body} as JSON with {@code status}: every JSON answer of the E2B endpoint, Connect's and the control plane's. */
    static void writeJson(HttpServletResponse response, int status, Object body) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        JSON.writeValue(response.getOutputStream(), body);
    }

    static void answerUnary(HttpServletResponse response, Object message) throws IOException {
        writeJson(response, 200, message);
    }

    static void answerUnaryError(HttpServletResponse response, RpcException error) throws IOException {
        writeJson(response, error.code.httpStatus, errorBody(error));
    }

    private static ObjectNode errorBody(RpcException error) {
        var body = JSON.createObjectNode();
        body.put("code", error.code.wireName());
        body.put("message", error.getMessage() == null ? "" : error.getMessage());
        return body;
    }

    /** The answer of a server-streaming call: messages as they come, then its end. */
    static final class Stream {
        private final OutputStream out;
        private boolean ended;

        Stream(HttpServletResponse response) throws IOException {
            response.setStatus(200);
            response.setContentType("application/connect+json");
            this.out = response.getOutputStream();
        }

        synchronized void send(Object message) throws IOException {
            write(0, JSON.writeValueAsBytes(message));
        }

        /** Ends the stream, with {@code error} (null: success). */
        synchronized void end(RpcException error) throws IOException {
            if (ended) return;
            ended = true;
            var end = JSON.createObjectNode();
            if (error != null) end.set("error", errorBody(error));
            write(END_STREAM, JSON.writeValueAsBytes(end));
        }

        private void write(int flags, byte[] message) throws IOException {
            out.write(envelope(flags, message));
            out.flush();
        }
    }
}
