package io.stasis.network.linux.dns;

import java.net.Inet4Address;
import java.util.Arrays;
import java.util.HexFormat;

/** A resource record. Its type is its data's; the TTL is the unsigned 32-bit number as sent. */
public record DnsRecord(String name, int dnsClass, long ttl, Data data) {

    public DnsRecord {
        DnsName.check(name);
        DnsQuestion.checkU16("class", dnsClass);
        if (ttl < 0 || ttl > 0xffff_ffffL) throw new IllegalArgumentException("ttl " + ttl + " out of 0..2^32-1");
        if (data instanceof A && dnsClass != DnsType.CLASS_IN) throw new IllegalArgumentException("an address record of class " + dnsClass + ", not IN");
    }

    public static DnsRecord a(String name, long ttl, Inet4Address address) {
        return new DnsRecord(name, DnsType.CLASS_IN, ttl, new A(address));
    }

    public static DnsRecord cname(String name, long ttl, String target) {
        return new DnsRecord(name, DnsType.CLASS_IN, ttl, new Cname(target));
    }

    public int type() {
        return data.type();
    }

    /**
     * The TTL in seconds a cache may keep this record. RFC 2181 section 8: a value with the top bit
     * set is treated as zero.
     */
    public long cacheSeconds() {
        return ttl > Integer.MAX_VALUE ? 0 : ttl;
    }

    /** What a record says, as far as the resolver needs to understand it. */
    public sealed interface Data {
        int type();
    }

    /** An IPv4 address (class IN only; an A of another class is {@link Opaque}). */
    public record A(Inet4Address address) implements Data {
        @Override
        public int type() {
            return DnsType.A;
        }
    }

    /** An alias: the owner name is {@code target}'s. */
    public record Cname(String target) implements Data {
        public Cname {
            DnsName.check(target);
        }

        @Override
        public int type() {
            return DnsType.CNAME;
        }
    }

    /**
     * Any other data, as it stood in the message. Names inside it may be compression pointers into
     * that message, so these bytes mean something only there: read them, do not write them elsewhere.
     */
    public record Opaque(int type, byte[] bytes) implements Data {
        public Opaque {
            DnsQuestion.checkU16("type", type);
            if (bytes.length > 0xffff) throw new IllegalArgumentException("record data of " + bytes.length + " bytes exceeds 65535");
            bytes = bytes.clone();
        }

        @Override
        public byte[] bytes() {
            return bytes.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Opaque other && type == other.type && Arrays.equals(bytes, other.bytes);
        }

        @Override
        public int hashCode() {
            return 31 * type + Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return "Opaque[type=" + type + ", bytes=" + HexFormat.of().formatHex(bytes) + "]";
        }
    }
}
