package io.stasis.core.network;

import io.stasis.core.error.StasisException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * An IPv4 or IPv6 network in CIDR notation; a bare address is a /32 (or /128). The stored
 * address has its host bits cleared, so equal networks are equal records.
 */
public record Cidr(InetAddress network, int prefix) {
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");

    public Cidr {
        int bits = network.getAddress().length * 8;
        if (prefix < 0 || prefix > bits) throw new IllegalArgumentException("prefix " + prefix + " out of 0.." + bits);
        network = masked(network, prefix);
    }

    /** Whether {@code text} looks like an address or a network rather than a domain. */
    public static boolean looksLikeCidr(String text) {
        String address = text.contains("/") ? text.substring(0, text.indexOf('/')) : text;
        return IPV4.matcher(address).matches() || IPV6.matcher(address).matches();
    }

    /** Parses {@code 10.0.0.0/8}, {@code 192.0.2.7}, {@code 2001:db8::/32}; {@code invalid_request} naming {@code field} otherwise. */
    public static Cidr parse(String text, String field) {
        int slash = text.indexOf('/');
        String address = slash < 0 ? text : text.substring(0, slash);
        if (!looksLikeCidr(address)) throw StasisException.invalid(field, "'" + text + "' is not an IP address or CIDR network");
        InetAddress parsed;
        try {
            parsed = InetAddress.ofLiteral(address); // a literal only: never a lookup
        } catch (IllegalArgumentException e) {
            throw StasisException.invalid(field, "'" + text + "' is not an IP address or CIDR network");
        }
        if (IPV4.matcher(address).matches() && !Arrays.stream(address.split("\\.")).allMatch(o -> Integer.parseInt(o) <= 255))
            throw StasisException.invalid(field, "'" + text + "' has an octet above 255");
        int bits = parsed.getAddress().length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String digits = text.substring(slash + 1);
            if (!digits.matches("\\d{1,3}") || Integer.parseInt(digits) > bits)
                throw StasisException.invalid(field, "'" + text + "' has a prefix length outside 0.." + bits);
            prefix = Integer.parseInt(digits);
        }
        return new Cidr(parsed, prefix);
    }

    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        byte[] n = network.getAddress();
        if (a.length != n.length) return false;
        return Arrays.equals(masked(a, prefix), n);
    }

    public boolean isIpv4() {
        return network.getAddress().length == 4;
    }

    private static InetAddress masked(InetAddress address, int prefix) {
        try {
            return InetAddress.getByAddress(masked(address.getAddress(), prefix));
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] masked(byte[] bytes, int prefix) {
        byte[] out = bytes.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    @Override
    public String toString() {
        return network.getHostAddress() + "/" + prefix;
    }
}
