package io.stasis.server.preview;

import io.stasis.http1.HeadReader;
import io.stasis.http1.HttpInput;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * A minimal WebSocket server on 127.0.0.1 for the proxy's tests (RFC 6455): accepts the upgrade,
 * echoes text and binary frames, answers pings and closes. Records the path and the preview token
 * header of the last handshake, to show what the proxy forwarded.
 */
final class WebSocketEcho implements AutoCloseable {
    private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private final ServerSocket server;
    volatile String lastPath;
    volatile String lastToken;

    WebSocketEcho() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("ws-echo-accept").start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    Thread.ofVirtual().name("ws-echo").start(() -> serve(socket));
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    int port() {
        return server.getLocalPort();
    }

    private void serve(Socket socket) {
        try (socket) {
            var input = new HttpInput(socket.getInputStream());
            var in = new DataInputStream(input);
            OutputStream out = socket.getOutputStream();
            var head = HeadReader.readRequest(input);
            if (head == null) return;
            lastPath = head.target();
            lastToken = head.headers().first(PreviewCredentials.HEADER).orElse(null);
            String key = head.headers().first("Sec-WebSocket-Key").orElseThrow();
            String accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1")
                    .digest((key + GUID).getBytes(StandardCharsets.US_ASCII)));
            out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
                    + accept + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            while (true) {
                int b0 = in.readUnsignedByte(), b1 = in.readUnsignedByte();
                int opcode = b0 & 0x0f;
                long length = b1 & 0x7f;
                if (length == 126) length = in.readUnsignedShort();
                else if (length == 127) length = in.readLong();
                byte[] mask = new byte[4];
                if ((b1 & 0x80) != 0) in.readFully(mask);
                byte[] payload = new byte[(int) length];
                in.readFully(payload);
                for (int i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
                int reply = switch (opcode) {
                    case 1, 2 -> opcode;
                    case 9 -> 10;
                    case 8 -> 8;
                    default -> -1;
                };
                if (reply >= 0) send(out, reply, payload);
                if (opcode == 8) return;
            }
        } catch (Exception e) {
            // the client went away: the test's assertions say whether that was expected
        }
    }

    private static void send(OutputStream out, int opcode, byte[] payload) throws IOException {
        out.write(0x80 | opcode);
        if (payload.length < 126) {
            out.write(payload.length);
        } else {
            out.write(126);
            out.write(payload.length >>> 8);
            out.write(payload.length & 0xff);
        }
        out.write(payload);
        out.flush();
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // closing only
        }
    }
}
