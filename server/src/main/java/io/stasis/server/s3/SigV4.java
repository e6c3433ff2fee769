package io.stasis.server.s3;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4 for the S3 endpoint: parses the {@code Authorization} header, rebuilds
 * the canonical request from what arrived, and checks the signature with the credential as the
 * secret access key. The access key id <em>is</em> the credential (an API key or a scoped token),
 * so the service can find it by its hash; the signature then proves that whoever sent the request
 * holds it, and that method, path, query, signed headers and payload hash were not changed.
 */
final class SigV4 {
    static final String ALGORITHM = "AWS4-HMAC-SHA256";
    static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    static final Duration MAX_SKEW = Duration.ofMinutes(15);
    static final String EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    /** A request whose signature checked out. {@code signingKey} and {@code signature} seed the chunk signatures of a streamed body. */
    record Verified(String accessKeyId, byte[] signingKey, String amzDate, String scope, String signature, String payloadHash) {
    }

    /** Why a request is refused, as an S3 error code. */
    static final class Refused extends RuntimeException {
        final String code;

        Refused(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** What SigV4 needs of the request. */
    record Request(String method, String rawPath, String rawQuery, Function<String, List<String>> headers) {
        String header(String name) {
            var values = headers.apply(name);
            return values == null || values.isEmpty() ? null : values.getFirst();
        }
    }

    private SigV4() {
    }

    /** The access key id named by the Authorization header, before anything is checked. */
    static Map<String, String> parse(String authorization) {
        if (authorization == null || !authorization.startsWith(ALGORITHM + " "))
            throw new Refused("AccessDenied", "send an AWS Signature Version 4 Authorization header (" + ALGORITHM + ")");
        var fields = new LinkedHashMap<String, String>();
        for (String part : authorization.substring(ALGORITHM.length() + 1).split(",")) {
            int eq = part.indexOf('=');
            if (eq > 0) fields.put(part.substring(0, eq).strip(), part.substring(eq + 1).strip());
        }
        for (String required : List.of("Credential", "SignedHeaders", "Signature"))
            if (!fields.containsKey(required)) throw new Refused("AuthorizationHeaderMalformed", "the Authorization header lacks " + required);
        return fields;
    }

    /** Checks the request's signature with {@code secret} (the credential itself). */
    static Verified verify(Request request, Map<String, String> fields, String secret, Instant now) {
        String[] credential = fields.get("Credential").split("/");
        if (credential.length != 5 || !credential[3].equals("s3") || !credential[4].equals("aws4_request"))
            throw new Refused("AuthorizationHeaderMalformed", "Credential must be <access key id>/<date>/<region>/s3/aws4_request");
        String amzDate = request.header("x-amz-date");
        if (amzDate == null) throw new Refused("AccessDenied", "the x-amz-date header is required");
        Instant signedAt;
        try {
            signedAt = Instant.from(AMZ_DATE.parse(amzDate));
        } catch (RuntimeException e) {
            throw new Refused("AccessDenied", "x-amz-date is not yyyyMMdd'T'HHmmss'Z'");
        }
        if (Duration.between(signedAt, now).abs().compareTo(MAX_SKEW) > 0)
            throw new Refused("RequestTimeTooSkewed", "the request was signed at " + signedAt + ", more than 15 minutes from now");
        if (!amzDate.startsWith(credential[1])) throw new Refused("AuthorizationHeaderMalformed", "the credential's date is not x-amz-date's");
        String payloadHash = request.header("x-amz-content-sha256");
        if (payloadHash == null) throw new Refused("InvalidRequest", "the x-amz-content-sha256 header is required");
        String signedHeaders = fields.get("SignedHeaders");
        var names = List.of(signedHeaders.split(";"));
        if (!names.contains("host") || !names.contains("x-amz-date")) // the payload hash is covered anyway: it ends the canonical request
            throw new Refused("AccessDenied", "SignedHeaders must include host and x-amz-date");
        var canonical = new StringBuilder();
        canonical.append(request.method()).append('\n').append(request.rawPath()).append('\n')
                .append(canonicalQuery(request.rawQuery())).append('\n');
        for (String name : names) {
            var values = request.headers().apply(name);
            if (values == null) values = List.of();
            // Jetty answers "Expect: 100-continue" itself and removes the header; clients sign it.
            if (values.isEmpty() && name.equals("expect")) values = List.of("100-continue");
            var trimmed = new ArrayList<String>();
            for (String v : values) trimmed.add(v.strip().replaceAll("\\s+", " "));
            canonical.append(name).append(':').append(String.join(",", trimmed)).append('\n');
        }
        canonical.append('\n').append(signedHeaders).append('\n').append(payloadHash);
        String scope = credential[1] + "/" + credential[2] + "/s3/aws4_request";
        String toSign = ALGORITHM + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex(canonical.toString().getBytes(StandardCharsets.UTF_8));
        byte[] key = signingKey(secret, credential[1], credential[2]);
        String expected = HexFormat.of().formatHex(hmac(key, toSign));
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), fields.get("Signature").getBytes(StandardCharsets.US_ASCII)))
            throw new Refused("SignatureDoesNotMatch", "the request signature we calculated does not match the signature you provided;"
                    + " the canonical request was:\n" + canonical);
        return new Verified(credential[0], key, amzDate, scope, expected, payloadHash);
    }

    static String canonicalQuery(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) return "";
        var pairs = new ArrayList<String[]>();
        for (String part : rawQuery.split("&")) {
            if (part.isEmpty()) continue;
            int eq = part.indexOf('=');
            String k = eq < 0 ? part : part.substring(0, eq);
            String v = eq < 0 ? "" : part.substring(eq + 1);
            pairs.add(new String[] {encode(decode(k)), encode(decode(v))});
        }
        pairs.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
        var out = new StringBuilder();
        for (var p : pairs) {
            if (!out.isEmpty()) out.append('&');
            out.append(p[0]).append('=').append(p[1]);
        }
        return out.toString();
    }

    /** Percent-decoding of a URI component ('+' stays '+'). */
    static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** RFC 3986 encoding as SigV4 wants it: unreserved characters as they are, everything else %XX. */
    static String encode(String s) {
        var out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~')
                out.append((char) c);
            else out.append('%').append(String.format("%02X", c));
        }
        return out.toString();
    }

    static byte[] signingKey(String secret, String date, String region) {
        byte[] k = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), date);
        k = hmac(k, region);
        k = hmac(k, "s3");
        return hmac(k, "aws4_request");
    }

    static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is always there", e);
        }
    }

    static String sha256Hex(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is always there", e);
        }
    }

    /** The signature of one chunk of a {@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD} body. */
    static String chunkSignature(Verified v, String previous, byte[] chunk, int length) {
        try {
            var digest = MessageDigest.getInstance("SHA-256");
            digest.update(chunk, 0, length);
            String toSign = "AWS4-HMAC-SHA256-PAYLOAD\n" + v.amzDate() + "\n" + v.scope() + "\n" + previous + "\n" + EMPTY_SHA256 + "\n"
                    + HexFormat.of().formatHex(digest.digest());
            return HexFormat.of().formatHex(hmac(v.signingKey(), toSign));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is always there", e);
        }
    }
}
