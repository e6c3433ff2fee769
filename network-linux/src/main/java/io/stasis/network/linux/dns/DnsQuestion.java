package io.stasis.network.linux.dns;

/** A question: the name as sent (case kept, without the trailing dot; the root is empty), its type and class. */
public record DnsQuestion(String name, int type, int dnsClass) {

    public DnsQuestion {
        DnsName.check(name);
        checkU16("type", type);
        checkU16("class", dnsClass);
    }

    public static DnsQuestion in(String name, int type) {
        return new DnsQuestion(name, type, DnsType.CLASS_IN);
    }

    /** Whether {@code other} asks the same, names compared without case (resolvers may randomise it). */
    public boolean sameAs(DnsQuestion other) {
        return type == other.type && dnsClass == other.dnsClass && name.equalsIgnoreCase(other.name);
    }

    static void checkU16(String what, int value) {
        if (value < 0 || value > 0xffff) throw new IllegalArgumentException(what + " " + value + " out of 0..65535");
    }
}
