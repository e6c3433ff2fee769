package io.stasis.network.linux.proxy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;

/**
 * A {@link NativeSocket} (an accepted client fd) as a {@link Socket}, so that the JDK's TLS can be
 * layered over it ({@code SSLSocketFactory.createSocket(socket, consumed, autoClose)}). Only what the
 * TLS layer uses is implemented: the streams, read timeouts, shutdowns and close. Closing shuts the
 * fd down; the {@link ConnectionHandler} closes the fd itself when the connection's threads are done.
 */
final class NativeSocketAdapter extends Socket {
    private static final int BUFFER = 16 * 1024;

    private final NativeSocket client;
    private final InetSocketAddress peer;
    private final InputStream in = new In();
    private final OutputStream out = new Out();
    private volatile int timeoutMillis;
    private volatile boolean closed;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;

    NativeSocketAdapter(NativeSocket client, InetSocketAddress peer) {
        this.client = client;
        this.peer = peer;
    }

    @Override
    public InputStream getInputStream() {
        return in;
    }

    @Override
    public OutputStream getOutputStream() {
        return out;
    }

    @Override
    public boolean isConnected() {
        return true;
    }

    @Override
    public boolean isBound() {
        return true;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isInputShutdown() {
        return inputShutdown;
    }

    @Override
    public boolean isOutputShutdown() {
        return outputShutdown;
    }

    @Override
    public void shutdownInput() {
        inputShutdown = true;
    }

    @Override
    public void shutdownOutput() throws IOException {
        outputShutdown = true;
        client.shutdownOutput();
    }

    @Override
    public void close() {
        closed = true;
        client.abort();
    }

    @Override
    public void setSoTimeout(int timeout) {
        timeoutMillis = timeout;
    }

    @Override
    public int getSoTimeout() {
        return timeoutMillis;
    }

    @Override
    public void setTcpNoDelay(boolean on) {
        // set on the fd by the connection handler already
    }

    @Override
    public boolean getTcpNoDelay() {
        return true;
    }

    @Override
    public InetAddress getInetAddress() {
        return peer.getAddress();
    }

    @Override
    public int getPort() {
        return peer.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return peer;
    }

    @Override
    public String toString() {
        return "NativeSocketAdapter[" + client + ", peer " + peer + "]";
    }

    private final class In extends InputStream {
        private final MemorySegment buffer = Arena.ofAuto().allocate(BUFFER);

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) return 0;
            if (inputShutdown || closed) return -1;
            MemorySegment target = buffer.asSlice(0, Math.min(len, BUFFER));
            int timeout = timeoutMillis;
            int n = timeout > 0 ? client.read(target, System.nanoTime() + timeout * 1_000_000L) : client.read(target);
            if (n == 0) return -1;
            MemorySegment.copy(target, ValueLayout.JAVA_BYTE, 0, b, off, n);
            return n;
        }
    }

    private final class Out extends OutputStream {
        private final MemorySegment buffer = Arena.ofAuto().allocate(BUFFER);

        @Override
        public void write(int b) throws IOException {
            write(new byte[]{(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            while (len > 0) {
                int n = Math.min(len, BUFFER);
                MemorySegment.copy(b, off, buffer, ValueLayout.JAVA_BYTE, 0, n);
                client.write(buffer.asSlice(0, n));
                off += n;
                len -= n;
            }
        }
    }
}
