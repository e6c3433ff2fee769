package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.fs.linux.ConfinedRoot;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connection to a sandbox's stasis-init over its control socket. The socket file lives inside the
 * sandbox, which could replace it with a symlink; it is therefore opened confined to the sandbox
 * root and refused unless it is a socket, and connected through {@code /proc/self/fd}.
 */
final class InitConnection implements AutoCloseable {
    static final String SOCKET = "/.stasis/ctl.sock";
    private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(30);

    private final SandboxId sandbox;
    private final SocketChannel channel;

    private InitConnection(SandboxId sandbox, SocketChannel channel) {
        this.sandbox = sandbox;
        this.channel = channel;
    }

    static InitConnection open(SandboxId sandbox, ConfinedRoot root) {
        try (var socket = root.pinSocket(SOCKET)) {
            var channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(socket.procPath()));
            } catch (IOException e) {
                channel.close();
                throw e;
            }
            return new InitConnection(sandbox, channel);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(sandbox.value(), "connect to stasis-init", e.getMessage(), e);
        } catch (RuntimeException e) {
            throw StasisException.runtimeFailed(sandbox.value(), "connect to stasis-init", e.getMessage(), e);
        }
    }

    /**
     * Sends a request and returns the reply, which stasis-init sends at once: none within
     * {@link #REPLY_TIMEOUT} means its processes are frozen or stopped when they should not be, and
     * the call fails ({@code runtime_failed}) rather than holding its caller, and the sandbox's lock,
     * for ever.
     */
    InitFrame call(InitFrame request) {
        send(request);
        var timedOut = new AtomicBoolean();
        var watchdog = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(REPLY_TIMEOUT);
                timedOut.set(true);
                close();
            } catch (InterruptedException e) {
                // answered in time
            }
        });
        try {
            return receive();
        } catch (StasisException e) {
            if (!timedOut.get()) throw e;
            throw StasisException.runtimeFailed(sandbox.value(), "receive from stasis-init", "no answer to '" + request.verb()
                    + "' within " + REPLY_TIMEOUT.toSeconds() + " s: the sandbox's processes are frozen or stopped", e);
        } finally {
            watchdog.interrupt();
        }
    }

    void send(InitFrame request) {
        try {
            var buffer = ByteBuffer.wrap(request.encode());
            while (buffer.hasRemaining()) channel.write(buffer);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(sandbox.value(), "send to stasis-init", e.getMessage(), e);
        }
    }

    /** Blocks until the next frame arrives. */
    InitFrame receive() {
        try {
            var head = readFully(4).order(ByteOrder.LITTLE_ENDIAN);
            int length = head.getInt();
            if (length < 0 || length > InitFrame.MAX_LENGTH) throw new IOException("bad frame length " + length);
            return InitFrame.decode(readFully(length).array());
        } catch (IOException e) {
            throw StasisException.runtimeFailed(sandbox.value(), "receive from stasis-init", e.getMessage(), e);
        }
    }

    private ByteBuffer readFully(int n) throws IOException {
        var buffer = ByteBuffer.allocate(n);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) throw new IOException("stasis-init closed the connection");
        }
        return buffer.flip();
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing a unix socket we own cannot fail in a way that matters
        }
    }
}
