package io.stasis.network.linux.nflog;

import java.io.IOException;
import java.time.Duration;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one NFLOG group on a platform thread of its own and hands each logged packet on as a
 * {@link DroppedPacket}. Only one socket on the host can bind a group: a second Stasis instance on
 * the same group fails at {@link #start}. A message that does not decode, or a consumer that throws,
 * costs that message only; messages lost to a full socket buffer are logged and counted.
 */
public final class NflogReader implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NflogReader.class);
    /** IPv4 header with the most options (60 bytes) and the ports: all a drop event needs. */
    static final int COPY_RANGE = 64;
    private static final int BUFFER = 64 * 1024;
    /** How long {@link #close} may wait for the thread to notice. */
    private static final int POLL_MILLIS = 200;
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(5);
    private static final int BIND_SEQUENCE = 1;

    private final int group;
    private final NetlinkSocket socket;
    private final Consumer<DroppedPacket> onDropped;
    private final Thread thread;
    private volatile boolean running = true;
    private long lost;

    private NflogReader(int group, NetlinkSocket socket, Consumer<DroppedPacket> onDropped) {
        this.group = group;
        this.socket = socket;
        this.onDropped = onDropped;
        this.thread = Thread.ofPlatform().daemon().name("stasis-nflog-" + group).unstarted(this::run);
    }

    /** Binds {@code group} and starts reading it; {@code onDropped} is called on the reader's thread. */
    public static NflogReader start(int group, Consumer<DroppedPacket> onDropped) throws IOException {
        var socket = NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER, BUFFER);
        try {
            socket.send(NflogCodec.bind(BIND_SEQUENCE, group, COPY_RANGE));
            awaitAck(socket, group);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
        var reader = new NflogReader(group, socket, onDropped);
        reader.thread.start();
        log.atInfo().addKeyValue("group", group).log("reading the packet filter's drop log");
        return reader;
    }

    private static void awaitAck(NetlinkSocket socket, int group) throws IOException {
        byte[] buffer = new byte[BUFFER];
        long deadline = System.nanoTime() + ACK_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            int n = socket.receive(buffer, POLL_MILLIS);
            if (n == 0) continue;
            try {
                for (var m : NflogCodec.decode(buffer, n)) {
                    if (!(m instanceof NflogCodec.Ack ack) || ack.sequence() != BIND_SEQUENCE) continue;
                    if (ack.error() == 0) return;
                    int errno = -ack.error();
                    if (errno == NetlinkException.EBUSY || errno == NetlinkException.EPERM)
                        throw new NetlinkException("binding NFLOG group " + group + " (another process reads it: give each Stasis instance its own group)", errno);
                    throw new NetlinkException("binding NFLOG group " + group, errno);
                }
            } catch (NflogFormatException e) {
                throw new IOException("the kernel's answer to binding NFLOG group " + group + " did not decode", e);
            }
        }
        throw new IOException("no answer from the kernel to binding NFLOG group " + group + " within " + ACK_TIMEOUT);
    }

    private void run() {
        byte[] buffer = new byte[BUFFER];
        try {
            while (running) {
                int n;
                try {
                    n = socket.receive(buffer, POLL_MILLIS);
                } catch (NetlinkException e) {
                    if (e.errno() != NetlinkException.ENOBUFS) throw e;
                    lost++;
                    log.atWarn().addKeyValue("group", group).addKeyValue("overruns", lost).log("drop log messages lost: the socket buffer was full");
                    continue;
                }
                if (n > 0) deliver(buffer, n);
            }
        } catch (IOException | RuntimeException e) {
            log.atError().addKeyValue("group", group).setCause(e).log("the drop log reader stopped: dropped packets no longer become events");
        } finally {
            socket.close();
        }
    }

    private void deliver(byte[] buffer, int n) {
        try {
            for (var m : NflogCodec.decode(buffer, n)) {
                if (!(m instanceof NflogCodec.Packet p)) continue;
                DroppedPacket dropped;
                try {
                    dropped = DroppedPacket.parse(p.prefix(), p.payload());
                } catch (NflogFormatException e) {
                    log.atDebug().addKeyValue("group", group).addKeyValue("prefix", p.prefix()).addKeyValue("error", e.getMessage()).log("logged packet skipped");
                    continue;
                }
                try {
                    onDropped.accept(dropped);
                } catch (RuntimeException e) {
                    log.atWarn().addKeyValue("group", group).addKeyValue("packet", dropped).setCause(e).log("a dropped packet could not be reported");
                }
            }
        } catch (NflogFormatException e) {
            log.atDebug().addKeyValue("group", group).addKeyValue("error", e.getMessage()).log("netlink messages skipped");
        }
    }

    /** Stops reading and unbinds the group (closing the socket does); waits for the thread. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(Duration.ofMillis(POLL_MILLIS * 10L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) log.atWarn().addKeyValue("group", group).log("the drop log reader did not stop in time");
    }
}
