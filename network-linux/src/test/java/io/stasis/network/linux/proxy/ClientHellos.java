package io.stasis.network.linux.proxy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Builds TLS ClientHellos byte by byte, the way the parser's tests need them: any extensions, any record split. */
final class ClientHellos {
    private ClientHellos() {
    }

    record Extension(int type, byte[] data) {
    }

    static Extension serverName(String name) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        var list = new ByteArrayOutputStream();
        list.write(0); // host_name
        u16(list, n.length);
        list.writeBytes(n);
        var ext = new ByteArrayOutputStream();
        u16(ext, list.size());
        ext.writeBytes(list.toByteArray());
        return new Extension(0, ext.toByteArray());
    }

    /** A handshake message: type 1, 24-bit length, then the ClientHello body with these extensions in order. */
    static byte[] handshake(byte[] sessionId, int cipherSuites, List<Extension> extensions) {
        var body = new ByteArrayOutputStream();
        u16(body, 0x0303);
        body.writeBytes(new byte[32]);
        body.write(sessionId.length);
        body.writeBytes(sessionId);
        u16(body, cipherSuites * 2);
        for (int i = 0; i < cipherSuites; i++) u16(body, 0x1301 + i);
        body.write(1);
        body.write(0);
        var exts = new ByteArrayOutputStream();
        for (Extension e : extensions) {
            u16(exts, e.type());
            u16(exts, e.data().length);
            exts.writeBytes(e.data());
        }
        u16(body, exts.size());
        body.writeBytes(exts.toByteArray());
        var hs = new ByteArrayOutputStream();
        hs.write(1);
        hs.write(body.size() >>> 16);
        u16(hs, body.size() & 0xffff);
        hs.writeBytes(body.toByteArray());
        return hs.toByteArray();
    }

    /** {@code handshake} cut into TLS handshake records of {@code sizes} bytes (cycled; the last record takes the rest). */
    static byte[] records(byte[] handshake, List<Integer> sizes) {
        var out = new ByteArrayOutputStream();
        int at = 0;
        for (int i = 0; at < handshake.length; i++) {
            int size = Math.min(Math.max(1, sizes.isEmpty() ? handshake.length : sizes.get(i % sizes.size())), handshake.length - at);
            out.write(22);
            u16(out, 0x0301);
            u16(out, size);
            out.write(handshake, at, size);
            at += size;
        }
        return out.toByteArray();
    }

    private static void u16(ByteArrayOutputStream out, int v) {
        out.write(v >>> 8);
        out.write(v & 0xff);
    }
}
