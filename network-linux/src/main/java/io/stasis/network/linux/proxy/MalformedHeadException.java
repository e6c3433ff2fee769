package io.stasis.network.linux.proxy;

/**
 * The first bytes of a connection are not a ClientHello or request head the proxy can read
 * unambiguously. The proxy refuses such connections instead of letting the address decide: a server
 * parsing more leniently could find a name the proxy did not see.
 */
final class MalformedHeadException extends Exception {
    private final String rule;

    /**
     * @param rule   what the refusal is recorded under, in the policy's words ({@code "blocked malformed tls"})
     * @param detail what exactly was wrong, for the log
     */
    MalformedHeadException(String rule, String detail) {
        super(detail);
        this.rule = rule;
    }

    static MalformedHeadException tls(String detail) {
        return new MalformedHeadException("blocked malformed tls", detail);
    }

    static MalformedHeadException http(String detail) {
        return new MalformedHeadException("blocked malformed http", detail);
    }

    String rule() {
        return rule;
    }
}
