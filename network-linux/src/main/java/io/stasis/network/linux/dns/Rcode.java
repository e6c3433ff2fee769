package io.stasis.network.linux.dns;

/** Response codes (RFC 1035 section 4.1.1) the resolver sends. */
public final class Rcode {
    public static final int NOERROR = 0;
    public static final int FORMERR = 1;
    public static final int SERVFAIL = 2;
    public static final int NXDOMAIN = 3;
    public static final int NOTIMP = 4;
    public static final int REFUSED = 5;

    private Rcode() {
    }

    /** The mnemonic, for logs. */
    public static String name(int rcode) {
        return switch (rcode) {
            case NOERROR -> "NOERROR";
            case FORMERR -> "FORMERR";
            case SERVFAIL -> "SERVFAIL";
            case NXDOMAIN -> "NXDOMAIN";
            case NOTIMP -> "NOTIMP";
            case REFUSED -> "REFUSED";
            default -> "RCODE" + rcode;
        };
    }
}
