package io.stasis.runtime.runc;

import java.io.ByteArrayOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/** A stand-in for a gVisor sentry's control server (gVisor's urpc: one JSON object each way), for stasis-sentry's tests. */
final class SentryStandIn {
    private SentryStandIn() {
    }

    /**
     * Accepts one connection on {@code socket}, reads the call and completes with it; then writes
     * {@code answer} a piece at a time and hangs up, or ({@code silent}) never answers, as a sentry
     * still at work on the call, until the caller is gone.
     */
    static CompletableFuture<String> serve(Path socket, boolean silent, String... answer) throws Exception {
        Files.deleteIfExists(socket);
        var server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(socket));
        var request = new CompletableFuture<String>();
        Thread.ofVirtual().start(() -> {
            try (server; var client = server.accept()) {
                var received = new ByteArrayOutputStream();
                var buffer = ByteBuffer.allocate(1024);
                while (!received.toString(StandardCharsets.UTF_8).endsWith("}}") && !received.toString(StandardCharsets.UTF_8).endsWith("null}")) {
                    buffer.clear();
                    if (client.read(buffer) < 0) break;
                    received.write(buffer.array(), 0, buffer.position());
                }
                request.complete(received.toString(StandardCharsets.UTF_8));
                if (silent) client.read(ByteBuffer.allocate(1)); // until the caller is gone
                for (String piece : answer) {
                    client.write(ByteBuffer.wrap(piece.getBytes(StandardCharsets.UTF_8)));
                    Thread.sleep(20);
                }
            } catch (Exception e) {
                request.completeExceptionally(e);
            }
        });
        return request;
    }
}
