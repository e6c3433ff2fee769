package io.stasis.network.linux.dns;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;

/** A client on 127.0.0.1, as a sandbox's stub resolver would ask. */
final class DnsTestClient {
    private static final int TIMEOUT_MILLIS = 3_000;

    private DnsTestClient() {
    }

    static DnsMessage udp(InetSocketAddress server, DnsMessage query) throws IOException, DnsFormatException {
        return DnsMessage.decode(udp(server, query.encode()));
    }

    static byte[] udp(InetSocketAddress server, byte[] query) throws IOException {
        try (var socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            socket.setSoTimeout(TIMEOUT_MILLIS);
            socket.send(new DatagramPacket(query, query.length, server));
            var packet = new DatagramPacket(new byte[65_535], 65_535);
            socket.receive(packet);
            return Arrays.copyOf(packet.getData(), packet.getLength());
        }
    }

    static DnsMessage tcp(InetSocketAddress server, DnsMessage query) throws IOException, DnsFormatException {
        try (var socket = new Socket()) {
            socket.connect(server, TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            DnsTcp.write(socket.getOutputStream(), query.encode());
            return DnsMessage.decode(DnsTcp.read(socket.getInputStream()).orElseThrow());
        }
    }
}
