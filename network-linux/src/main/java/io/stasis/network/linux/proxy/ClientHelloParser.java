package io.stasis.network.linux.proxy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the server name (SNI, RFC 6066) in a TLS ClientHello that may span several records. It is
 * strict where a lenient server could see a name this parser missed: duplicate extensions, more than
 * one name, trailing bytes and non-handshake records before the hello are refused, and so is
 * Encrypted Client Hello, whose visible name is only the provider's cover name.
 */
final class ClientHelloParser implements HeadParser {
    private static final int RECORD_HANDSHAKE = 22;
    private static final int RECORD_HEADER = 5;
    private static final int MAX_RECORD = 1 << 14; // TLSPlaintext.length limit
    private static final int HANDSHAKE_CLIENT_HELLO = 1;
    private static final int EXTENSION_SERVER_NAME = 0;
    private static final int EXTENSION_ECH = 0xfe0d;
    private static final int EXTENSION_ESNI_DRAFT = 0xffce;
    private static final int NAME_TYPE_HOST = 0;

    private final int maxHelloBytes;

    /** @param maxHelloBytes the longest ClientHello accepted; the proxy's read bound */
    ClientHelloParser(int maxHelloBytes) {
        this.maxHelloBytes = maxHelloBytes;
    }

    @Override
    public Head parse(byte[] buffer, int length) throws MalformedHeadException {
        // The hello's bytes, gathered from the fragments of consecutive handshake records.
        byte[] hello = new byte[Math.min(length, maxHelloBytes + 4)];
        int helloLength = 0;
        int offset = 0;
        while (true) {
            if (helloLength >= 4) {
                int declared = u24(hello, 1);
                if (hello[0] != HANDSHAKE_CLIENT_HELLO) throw MalformedHeadException.tls("first handshake message is type " + (hello[0] & 0xff));
                if (declared > maxHelloBytes) throw MalformedHeadException.tls("ClientHello of " + declared + " bytes");
                if (helloLength >= 4 + declared) {
                    if (helloLength > 4 + declared) throw MalformedHeadException.tls("handshake bytes after the ClientHello");
                    return new Head.Complete(serverName(new Reader(hello, 4, 4 + declared)));
                }
            }
            if (length - offset < RECORD_HEADER) return Head.PARTIAL;
            int type = buffer[offset] & 0xff;
            if (type != RECORD_HANDSHAKE) throw MalformedHeadException.tls("record type " + type + " before the ClientHello ended");
            if (buffer[offset + 1] != 3) throw MalformedHeadException.tls("record version major " + (buffer[offset + 1] & 0xff));
            int recordLength = u16(buffer, offset + 3);
            if (recordLength == 0 || recordLength > MAX_RECORD) throw MalformedHeadException.tls("record of " + recordLength + " bytes");
            if (length - offset - RECORD_HEADER < recordLength) return Head.PARTIAL;
            if (helloLength + recordLength > hello.length) throw MalformedHeadException.tls("ClientHello longer than " + maxHelloBytes + " bytes");
            System.arraycopy(buffer, offset + RECORD_HEADER, hello, helloLength, recordLength);
            helloLength += recordLength;
            offset += RECORD_HEADER + recordLength;
        }
    }

    private static Optional<String> serverName(Reader body) throws MalformedHeadException {
        body.skip(2 + 32); // legacy_version, random
        int sessionId = body.u8();
        if (sessionId > 32) throw MalformedHeadException.tls("session id of " + sessionId + " bytes");
        body.skip(sessionId);
        int suites = body.u16();
        if (suites < 2 || suites % 2 != 0) throw MalformedHeadException.tls("cipher suites of " + suites + " bytes");
        body.skip(suites);
        int compression = body.u8();
        if (compression < 1) throw MalformedHeadException.tls("no compression methods");
        body.skip(compression);
        if (body.remaining() == 0) return Optional.empty(); // TLS 1.2 allows a hello without extensions
        Reader extensions = body.sub(body.u16());
        if (body.remaining() != 0) throw MalformedHeadException.tls("bytes after the extensions");
        Set<Integer> seen = new HashSet<>();
        Optional<String> name = Optional.empty();
        while (extensions.remaining() > 0) {
            int type = extensions.u16();
            Reader data = extensions.sub(extensions.u16());
            if (!seen.add(type)) throw MalformedHeadException.tls("extension " + type + " twice");
            if (type == EXTENSION_ECH || type == EXTENSION_ESNI_DRAFT)
                throw new MalformedHeadException("blocked encrypted client hello", "extension " + type);
            if (type == EXTENSION_SERVER_NAME) name = hostName(data);
        }
        return name;
    }

    private static Optional<String> hostName(Reader extension) throws MalformedHeadException {
        Reader list = extension.sub(extension.u16());
        if (extension.remaining() != 0) throw MalformedHeadException.tls("bytes after the server name list");
        int nameType = list.u8();
        if (nameType != NAME_TYPE_HOST) throw MalformedHeadException.tls("server name type " + nameType);
        byte[] raw = list.bytes(list.u16());
        // Like OpenSSL: exactly one host_name, since servers disagree on which of several they would use.
        if (list.remaining() != 0) throw MalformedHeadException.tls("more than one server name");
        for (byte b : raw) if (b <= 0x20 || b >= 0x7f) throw MalformedHeadException.tls("non-printable byte in the server name");
        Optional<String> name = HostNames.normalize(new String(raw, StandardCharsets.US_ASCII), MalformedHeadException::tls);
        if (name.isEmpty()) throw MalformedHeadException.tls("an IP address as server name"); // RFC 6066 forbids literals
        return name;
    }

    private static int u16(byte[] b, int at) {
        return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
    }

    private static int u24(byte[] b, int at) {
        return ((b[at] & 0xff) << 16) | ((b[at + 1] & 0xff) << 8) | (b[at + 2] & 0xff);
    }

    /** A bounds-checked cursor over {@code [position, end)}; running past the end is malformed input. */
    private static final class Reader {
        private final byte[] bytes;
        private int position;
        private final int end;

        Reader(byte[] bytes, int position, int end) {
            this.bytes = bytes;
            this.position = position;
            this.end = end;
        }

        int remaining() {
            return end - position;
        }

        int u8() throws MalformedHeadException {
            need(1);
            return bytes[position++] & 0xff;
        }

        int u16() throws MalformedHeadException {
            need(2);
            int v = ClientHelloParser.u16(bytes, position);
            position += 2;
            return v;
        }

        void skip(int n) throws MalformedHeadException {
            need(n);
            position += n;
        }

        byte[] bytes(int n) throws MalformedHeadException {
            need(n);
            byte[] out = Arrays.copyOfRange(bytes, position, position + n);
            position += n;
            return out;
        }

        Reader sub(int n) throws MalformedHeadException {
            need(n);
            Reader r = new Reader(bytes, position, position + n);
            position += n;
            return r;
        }

        private void need(int n) throws MalformedHeadException {
            if (n > remaining()) throw MalformedHeadException.tls("field of " + n + " bytes runs past its container");
        }
    }
}
