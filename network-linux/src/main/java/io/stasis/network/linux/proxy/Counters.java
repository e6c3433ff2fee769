package io.stasis.network.linux.proxy;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** The live counters behind {@link ProxyStats}; LongAdder because every relay thread adds bytes. */
final class Counters {
    final LongAdder accepted = new LongAdder();
    final LongAdder allowed = new LongAdder();
    final LongAdder denied = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder bytesUp = new LongAdder();
    final LongAdder bytesDown = new LongAdder();
    final LongAdder idleClosed = new LongAdder();
    final AtomicInteger active = new AtomicInteger();

    ProxyStats snapshot() {
        return new ProxyStats(accepted.sum(), allowed.sum(), denied.sum(), failed.sum(), bytesUp.sum(), bytesDown.sum(), active.get(), idleClosed.sum());
    }
}
