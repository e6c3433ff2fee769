package io.stasis.http1;

import java.util.List;

/** Where a message's body ends (RFC 9112 section 6.3). */
public sealed interface BodyFraming {
    /** No body. */
    record None() implements BodyFraming {
    }

    /** Exactly {@code length} bytes. */
    record Length(long length) implements BodyFraming {
    }

    /** Chunks, up to the last (empty) chunk and the trailer section. */
    record Chunked() implements BodyFraming {
    }

    /** Everything until the sender closes (responses only). */
    record UntilClose() implements BodyFraming {
    }

    BodyFraming NONE = new None();
    BodyFraming CHUNKED = new Chunked();
    BodyFraming UNTIL_CLOSE = new UntilClose();

    /**
     * A request's body; faults are 400. Refused, as the shapes of request smuggling: both
     * Transfer-Encoding and Content-Length, a Transfer-Encoding that does not end in chunked (or
     * names it twice), Transfer-Encoding in HTTP/1.0, differing or malformed lengths.
     */
    static BodyFraming ofRequest(RequestHead head) throws HttpFramingException {
        var codings = head.headers().tokens("Transfer-Encoding");
        if (!codings.isEmpty()) {
            checkCodings(codings, head.headers(), head.isHttp10(), 400);
            if (!codings.getLast().equals("chunked"))
                throw new HttpFramingException(400, "a request's Transfer-Encoding must end in chunked");
            return CHUNKED;
        }
        var lengths = head.headers().all("Content-Length");
        if (lengths.isEmpty()) return NONE;
        long length = contentLength(lengths, 400);
        return length == 0 ? NONE : new Length(length);
    }

    /**
     * A response's body; faults are 502. {@code requestMethod} matters: an answer to HEAD never has
     * a body, and a 2xx answer to CONNECT is a tunnel. The same conflicts as in a request are
     * refused; a Transfer-Encoding that does not end in chunked runs until the server closes.
     */
    static BodyFraming ofResponse(String requestMethod, ResponseHead head) throws HttpFramingException {
        int status = head.status();
        if (requestMethod.equals("HEAD") || (status >= 100 && status < 200) || status == 204 || status == 304) return NONE;
        if (requestMethod.equals("CONNECT") && status >= 200 && status < 300) return UNTIL_CLOSE;
        var codings = head.headers().tokens("Transfer-Encoding");
        if (!codings.isEmpty()) {
            checkCodings(codings, head.headers(), head.version().equals("HTTP/1.0"), 502);
            return codings.getLast().equals("chunked") ? CHUNKED : UNTIL_CLOSE;
        }
        var lengths = head.headers().all("Content-Length");
        if (lengths.isEmpty()) return UNTIL_CLOSE;
        long length = contentLength(lengths, 502);
        return length == 0 ? NONE : new Length(length);
    }

    private static void checkCodings(List<String> codings, HttpHeaders headers, boolean http10, int status) throws HttpFramingException {
        if (headers.has("Content-Length"))
            throw new HttpFramingException(status, "a message with both Transfer-Encoding and Content-Length");
        if (http10) throw new HttpFramingException(status, "Transfer-Encoding in an HTTP/1.0 message");
        if (codings.indexOf("chunked") != codings.lastIndexOf("chunked")
                || (codings.contains("chunked") && !codings.getLast().equals("chunked")))
            throw new HttpFramingException(status, "chunked applied more than once or not last");
    }

    /** One length, possibly repeated (also as a list in one field); anything else is a fault. */
    private static long contentLength(List<String> fields, int status) throws HttpFramingException {
        long found = -1;
        for (String field : fields) {
            for (String part : field.split(",", -1)) {
                String digits = part.strip();
                if (digits.isEmpty() || digits.length() > 18 || !digits.chars().allMatch(c -> c >= '0' && c <= '9'))
                    throw new HttpFramingException(status, "Content-Length is not a number: '" + field + "'");
                long value = Long.parseLong(digits);
                if (found >= 0 && found != value) throw new HttpFramingException(status, "conflicting Content-Length values");
                found = value;
            }
        }
        return found;
    }
}
