package io.stasis.network.linux.dns;

/**
 * A DNS message that breaks the wire format (RFC 1035 section 4): truncated, a bad label, a
 * compression pointer that does not point backwards. The only exception decoding throws.
 */
public final class DnsFormatException extends Exception {

    public DnsFormatException(String message) {
        super(message);
    }
}
