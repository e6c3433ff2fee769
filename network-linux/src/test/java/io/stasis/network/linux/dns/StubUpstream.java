package io.stasis.network.linux.dns;

import java.io.IOException;
import java.net.BindException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An upstream resolver on 127.0.0.1 for the resolver under test: fixed records by name (NXDOMAIN
 * for others), over UDP and TCP on one port, and a log of what it was asked.
 */
final class StubUpstream implements AutoCloseable {
    private final DatagramSocket udp;
    private final ServerSocket tcp;
    private final Map<String, List<DnsRecord>> records = new ConcurrentHashMap<>();
    private final Set<String> truncatedOverUdp = ConcurrentHashMap.newKeySet();
    private final List<Asked> asked = new CopyOnWriteArrayList<>();
    private final Thread udpLoop;
    private final Thread tcpLoop;

    record Asked(Transport transport, String name) {
    }

    private StubUpstream(DatagramSocket udp, ServerSocket tcp) {
        this.udp = udp;
        this.tcp = tcp;
        this.udpLoop = Thread.ofVirtual().name("stub-dns-udp").start(this::serveUdp);
        this.tcpLoop = Thread.ofVirtual().name("stub-dns-tcp").start(this::serveTcp);
    }

    static StubUpstream start() throws IOException {
        for (int attempt = 0; ; attempt++) {
            var udp = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            var tcp = new ServerSocket();
            try {
                tcp.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), udp.getLocalPort()));
                return new StubUpstream(udp, tcp);
            } catch (BindException e) {
                udp.close();
                tcp.close();
                if (attempt == 10) throw e;
            }
        }
    }

    StubUpstream answer(String name, DnsRecord... answers) {
        records.put(name, List.of(answers));
        return this;
    }

    /** Over UDP, {@code name} gets its answer with TC set and cut short; over TCP the whole answer. */
    StubUpstream truncateOverUdp(String name) {
        truncatedOverUdp.add(name);
        return this;
    }

    InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), udp.getLocalPort());
    }

    List<Asked> asked() {
        return List.copyOf(asked);
    }

    @Override
    public void close() throws IOException {
        udp.close();
        tcp.close();
        try {
            udpLoop.join(Duration.ofSeconds(5));
            tcpLoop.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void serveUdp() {
        byte[] buffer = new byte[65_535];
        while (!udp.isClosed()) {
            try {
                var packet = new DatagramPacket(buffer, buffer.length);
                udp.receive(packet);
                byte[] answer = answer(Arrays.copyOf(buffer, packet.getLength()), Transport.UDP);
                udp.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
            } catch (IOException | DnsFormatException e) {
                // closed, or a test sent garbage: the loop condition decides
            }
        }
    }

    private void serveTcp() {
        while (!tcp.isClosed()) {
            try (Socket connection = tcp.accept()) {
                byte[] query = DnsTcp.read(connection.getInputStream()).orElseThrow();
                DnsTcp.write(connection.getOutputStream(), answer(query, Transport.TCP));
            } catch (IOException | DnsFormatException e) {
                // as above
            }
        }
    }

    private byte[] answer(byte[] bytes, Transport transport) throws DnsFormatException {
        DnsMessage query = DnsMessage.decode(bytes);
        String name = query.questions().getFirst().name().toLowerCase(Locale.ROOT);
        asked.add(new Asked(transport, name));
        List<DnsRecord> answers = records.get(name);
        if (answers == null) return DnsMessage.reply(query, Rcode.NXDOMAIN, List.of()).encode();
        var reply = DnsMessage.reply(query, Rcode.NOERROR, answers);
        if (transport == Transport.UDP && truncatedOverUdp.contains(name)) {
            // cut inside the last record, as a server that fills the datagram to the byte may
            byte[] whole = new DnsMessage(reply.header().withTruncated(true), reply.questions(), answers, List.of(), List.of()).encode();
            return Arrays.copyOf(whole, whole.length - 3);
        }
        return reply.encode();
    }
}
