package io.stasis.network.linux.dns;

import java.util.Locale;

/** How a query reached the resolver; it leaves for the upstream the same way. */
enum Transport {
    UDP, TCP;

    String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
