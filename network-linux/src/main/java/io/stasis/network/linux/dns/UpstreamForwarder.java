package io.stasis.network.linux.dns;

import java.io.EOFException;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the upstream resolvers, in order, until one gives an answer that matches the query. Blocking;
 * meant for virtual threads.
 */
final class UpstreamForwarder {
    private static final Logger log = LoggerFactory.getLogger(UpstreamForwarder.class);
    private static final int MAX_UDP = 65_535;

    private final DnsUpstreams upstreams;
    // Unpredictable ids and a fresh source port per query make forged answers hard to slip in.
    private final RandomGenerator ids = new SecureRandom();

    UpstreamForwarder(DnsUpstreams upstreams) {
        this.upstreams = upstreams;
    }

    /** An upstream's answer: its bytes (with the upstream's id) and what they say. */
    record Forwarded(InetSocketAddress server, byte[] bytes, DnsMessage message) {
    }

    /** The first matching answer to {@code query} (the client's bytes, sent on with a new id), or empty if every upstream failed. */
    Optional<Forwarded> forward(byte[] query, DnsQuestion question, Transport transport) {
        for (InetSocketAddress server : upstreams.servers()) {
            int id = ids.nextInt(0x10000);
            try {
                byte[] sent = DnsHeader.withId(query, id);
                byte[] answer = transport == Transport.UDP ? overUdp(server, sent, id) : overTcp(server, sent);
                Optional<Forwarded> matching = matching(server, answer, id, question);
                if (matching.isPresent()) return matching;
            } catch (IOException e) {
                log.atDebug().addKeyValue("upstream", server).addKeyValue("name", question.name()).addKeyValue("transport", transport.wireName())
                        .addKeyValue("error", e.toString()).log("upstream resolver failed; trying the next");
            }
        }
        return Optional.empty();
    }

    private Optional<Forwarded> matching(InetSocketAddress server, byte[] answer, int id, DnsQuestion question) {
        DnsMessage message;
        try {
            message = DnsMessage.decode(answer);
        } catch (DnsFormatException e) {
            return truncatedHeaderOnly(server, answer, id, question, e);
        }
        boolean matches = message.header().response() && message.header().id() == id
                && message.questions().size() == 1 && message.questions().getFirst().sameAs(question);
        if (!matches) {
            log.atDebug().addKeyValue("upstream", server).addKeyValue("name", question.name()).log("upstream answer does not match the query; trying the next");
            return Optional.empty();
        }
        return Optional.of(new Forwarded(server, answer, message));
    }

    /**
     * A truncated answer may be cut anywhere. Its records cannot be checked, but its TC bit is
     * all the client needs: it retries over TCP. So it becomes an empty truncated answer.
     */
    private Optional<Forwarded> truncatedHeaderOnly(InetSocketAddress server, byte[] answer, int id, DnsQuestion question, DnsFormatException e) {
        try {
            DnsHeader header = DnsHeader.peek(answer);
            if (header.response() && header.truncated() && header.id() == id) {
                var empty = new DnsMessage(header, List.of(question), List.of(), List.of(), List.of());
                return Optional.of(new Forwarded(server, empty.encode(), empty));
            }
        } catch (DnsFormatException ignored) {
            // shorter than a header: the same failure as below
        }
        log.atDebug().addKeyValue("upstream", server).addKeyValue("name", question.name()).addKeyValue("error", e.getMessage())
                .log("upstream answer is malformed; trying the next");
        return Optional.empty();
    }

    private byte[] overUdp(InetSocketAddress server, byte[] query, int id) throws IOException {
        try (var socket = new DatagramSocket()) {
            socket.connect(server); // only the upstream's datagrams reach us, and an ICMP refusal fails fast
            socket.send(new DatagramPacket(query, query.length));
            long deadline = System.nanoTime() + upstreams.timeout().toNanos();
            byte[] buffer = new byte[MAX_UDP];
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) throw new SocketTimeoutException("no answer within " + upstreams.timeout());
                socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
                var packet = new DatagramPacket(buffer, buffer.length);
                socket.receive(packet);
                // A datagram with another id is a late answer to an earlier query or a forgery: wait on.
                if (packet.getLength() >= 2 && ((buffer[0] & 0xff) << 8 | buffer[1] & 0xff) == id)
                    return Arrays.copyOf(buffer, packet.getLength());
            }
        }
    }

    private byte[] overTcp(InetSocketAddress server, byte[] query) throws IOException {
        try (var socket = new Socket()) {
            int timeoutMillis = (int) upstreams.timeout().toMillis();
            socket.connect(server, timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            DnsTcp.write(socket.getOutputStream(), query);
            return DnsTcp.read(socket.getInputStream()).orElseThrow(() -> new EOFException("upstream closed the connection without answering"));
        }
    }
}
