package io.stasis.network.linux.dns;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/** A cursor over a received message; every read checks the bounds and fails as malformed. */
final class DnsReader {
    private final byte[] message;
    private int at;

    DnsReader(byte[] message) {
        this.message = message;
    }

    int u8() throws DnsFormatException {
        need(1, "a byte");
        return message[at++] & 0xff;
    }

    int u16() throws DnsFormatException {
        need(2, "a 16-bit number");
        int value = (message[at] & 0xff) << 8 | message[at + 1] & 0xff;
        at += 2;
        return value;
    }

    long u32() throws DnsFormatException {
        need(4, "a 32-bit number");
        return (long) u16() << 16 | u16();
    }

    byte[] bytes(int length) throws DnsFormatException {
        need(length, length + " bytes");
        byte[] value = Arrays.copyOfRange(message, at, at + length);
        at += length;
        return value;
    }

    String name() throws DnsFormatException {
        DnsName.Read read = DnsName.read(message, at);
        at = read.end();
        return read.name();
    }

    DnsQuestion question() throws DnsFormatException {
        return new DnsQuestion(name(), u16(), u16());
    }

    DnsRecord record() throws DnsFormatException {
        String name = name();
        int type = u16();
        int dnsClass = u16();
        long ttl = u32();
        int length = u16();
        need(length, "record data of " + length + " bytes");
        int end = at + length;
        DnsRecord.Data data;
        if (type == DnsType.A && dnsClass == DnsType.CLASS_IN) {
            if (length != 4) throw new DnsFormatException("an A record at " + at + " holds " + length + " bytes, not 4");
            data = new DnsRecord.A(ipv4(bytes(4)));
        } else if (type == DnsType.CNAME) {
            data = new DnsRecord.Cname(name());
            if (at != end) throw new DnsFormatException("a CNAME's name ends at " + at + ", its data at " + end);
        } else {
            data = new DnsRecord.Opaque(type, bytes(length));
        }
        return new DnsRecord(name, dnsClass, ttl, data);
    }

    private void need(int length, String what) throws DnsFormatException {
        if (length > message.length - at)
            throw new DnsFormatException("expected " + what + " at " + at + ", the message ends at " + message.length);
    }

    private static Inet4Address ipv4(byte[] address) {
        try {
            return (Inet4Address) InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("four bytes are always an address", e);
        }
    }
}
