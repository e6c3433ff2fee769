package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory of frozen sandboxes paged out in the background, one page-out a sandbox, each stopped
 * before the sandbox runs again, is dumped or goes. Both runtimes' standby: a runc sandbox's
 * processes, a gVisor sandbox's sentry (whose memory file the cgroup's reclaim pages out).
 */
final class PageOuts {
    private static final Logger log = LoggerFactory.getLogger(PageOuts.class);

    private final MemoryPager pager;
    /** Page-outs under way, each with its cancel flag. */
    private final Map<SandboxId, PageOut> running = new ConcurrentHashMap<>();

    PageOuts(MemoryPager pager) {
        this.pager = pager;
    }

    /** Pages out the memory of the sandbox's cgroup {@code cgroup}, frozen already, in the background. */
    void start(SandboxId id, String cgroup) {
        var pageOut = new PageOut();
        var previous = running.put(id, pageOut);
        if (previous != null) previous.cancelAndWait();
        pageOut.thread = Thread.ofVirtual().name("stasis-page-out-" + id.value()).start(() -> {
            long start = System.nanoTime();
            try {
                long released = pager.pageOut(id, cgroup, () -> pageOut.cancelled);
                log.atInfo().addKeyValue("sandbox", id).addKeyValue("releasedBytes", released)
                        .addKeyValue("swappedBytes", pager.swapped(cgroup)).addKeyValue("cancelled", pageOut.cancelled)
                        .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("standby memory paged out");
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", id).setCause(e).log("standby page-out failed; the sandbox stays frozen");
            } finally {
                running.remove(id, pageOut);
            }
        });
    }

    /** Stops the sandbox's page-out, if one is under way, and waits for it to let go. */
    void stop(SandboxId id) {
        var pageOut = running.remove(id);
        if (pageOut != null) pageOut.cancelAndWait();
    }

    /** A page-out in the background, and how a thaw stops it. */
    private static final class PageOut {
        volatile boolean cancelled;
        volatile Thread thread;

        void cancelAndWait() {
            cancelled = true;
            var t = thread;
            if (t == null) return;
            try {
                t.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
