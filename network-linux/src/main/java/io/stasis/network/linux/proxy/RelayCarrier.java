package io.stasis.network.linux.proxy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies bytes both ways between the client and an ordinary {@link Socket} upstream: the head first,
 * then client-to-upstream on the calling thread and upstream-to-client on one more (virtual)
 * thread. An end of stream
 * in one direction is passed on as a half-close, so request-then-shutdown clients still get their
 * answer; an error in either direction tears down both.
 */
final class RelayCarrier implements Carrier {
    private static final Logger log = LoggerFactory.getLogger(RelayCarrier.class);
    private static final int BUFFER = 16 * 1024;

    private final Duration connectTimeout;
    private final ThreadFactory downstreamThreads;
    private final Counters counters;

    RelayCarrier(Duration connectTimeout, ThreadFactory downstreamThreads, Counters counters) {
        this.connectTimeout = connectTimeout;
        this.downstreamThreads = downstreamThreads;
        this.counters = counters;
    }

    @Override
    public void carry(AllowedFlow flow, NativeSocket client, Teardown teardown) throws IOException {
        Socket upstream = new Socket();
        teardown.add(upstream);
        try {
            upstream.connect(flow.upstream(), (int) connectTimeout.toMillis());
            upstream.setTcpNoDelay(true); // the client chose its own segmenting; don't add Nagle's delay on top
        } catch (IOException e) {
            throw new UpstreamUnreachableException("cannot connect to " + flow.upstream(), e);
        }
        OutputStream toUpstream = upstream.getOutputStream();
        toUpstream.write(flow.head());
        counters.bytesUp.add(flow.head().length);
        Thread down = downstreamThreads.newThread(() -> downstream(flow, upstream, client, teardown));
        down.start();
        try {
            upstream(client, upstream, toUpstream);
        } catch (IOException e) {
            log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("upstream", flow.upstream())
                    .addKeyValue("error", e.getMessage()).log("egress relay to upstream ended by an error");
            teardown.abort();
        } finally {
            join(down, teardown);
            upstream.close();
        }
    }

    private void upstream(NativeSocket client, Socket upstream, OutputStream out) throws IOException {
        byte[] bytes = new byte[BUFFER];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(BUFFER);
            while (true) {
                int n = client.read(buffer);
                if (n == 0) {
                    if (!upstream.isClosed()) upstream.shutdownOutput();
                    return;
                }
                MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, bytes, 0, n);
                out.write(bytes, 0, n);
                counters.bytesUp.add(n);
            }
        }
    }

    private void downstream(AllowedFlow flow, Socket upstream, NativeSocket client, Teardown teardown) {
        byte[] bytes = new byte[BUFFER];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(BUFFER);
            InputStream in = upstream.getInputStream();
            while (true) {
                int n = in.read(bytes);
                if (n < 0) {
                    client.shutdownOutput();
                    return;
                }
                MemorySegment.copy(bytes, 0, buffer, ValueLayout.JAVA_BYTE, 0, n);
                client.write(buffer.asSlice(0, n));
                counters.bytesDown.add(n);
            }
        } catch (IOException e) {
            log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("upstream", flow.upstream())
                    .addKeyValue("error", e.getMessage()).log("egress relay to the sandbox ended by an error");
            teardown.abort();
        }
    }

    private static void join(Thread down, Teardown teardown) {
        boolean interrupted = false;
        while (true) {
            try {
                down.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the proxy is closing: stop the other direction too, then wait for it
                teardown.abort();
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }
}
