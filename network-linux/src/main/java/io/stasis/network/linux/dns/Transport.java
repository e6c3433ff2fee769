package io.stasis.network.linux.dns;

/** How a query reached the resolver; it leaves for the upstream the same way. */
enum Transport {
    UDP, TCP;

    String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
