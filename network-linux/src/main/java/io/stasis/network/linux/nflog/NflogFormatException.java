package io.stasis.network.linux.nflog;

/**
 * A netlink message, NFLOG attribute, log prefix or logged IPv4 header that breaks its format:
 * truncated, a length pointing past the end, a prefix not of the form {@code "<slot> <rule>"}. The
 * only exception decoding throws.
 */
public final class NflogFormatException extends Exception {

    public NflogFormatException(String message) {
        super(message);
    }
}
