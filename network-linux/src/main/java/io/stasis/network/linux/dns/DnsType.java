package io.stasis.network.linux.dns;

/** The record types (and query types) the resolver treats specially; others pass as numbers. */
public final class DnsType {
    public static final int A = 1;
    public static final int CNAME = 5;
    public static final int PTR = 12;
    public static final int AAAA = 28;
    public static final int OPT = 41;
    public static final int SVCB = 64;
    public static final int HTTPS = 65;
    public static final int IXFR = 251;
    public static final int AXFR = 252;
    public static final int ANY = 255;

    /** The Internet class, the only one the resolver answers. */
    public static final int CLASS_IN = 1;

    private DnsType() {
    }
}
