package io.stasis.storage.btrfs;

import io.stasis.core.error.StasisException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts the pool's btrfs quotas in the mode the disk limits are meant for, at every open:
 * <b>simple quotas</b> (squota), under which a root is charged only for the extents it wrote
 * itself and no transaction commit waits for shared extents to be traced. Decision table, by the
 * mode the pool is found in:
 * <pre>
 * squota                        keep it
 * off                           turn simple quotas on
 * qgroup (full, e.g. a pool     turn quotas off, then simple quotas on: the kernel never switches
 *   made before squota)           modes in place (an enable is a no-op while quotas are on), and
 *                                 turning them off drops every qgroup with its limit, so the
 *                                 caller must set every root's limit again
 * simple quotas unavailable     keep full quotas (or turn them on): a WARN says what that costs
 *   (kernel &lt; 6.7, or the CLI
 *   of btrfs-progs &lt; 6.7)
 * </pre>
 * If turning simple quotas on fails after all, full quotas are turned on instead, with the same
 * WARN; a pool is never left without quotas unless both fail (then {@code runtime_failed}).
 */
final class PoolQuotas {
    private static final Logger log = LoggerFactory.getLogger(PoolQuotas.class);

    /**
     * What the pool ended with.
     *
     * @param mode     {@code squota}, {@code qgroup}, or {@code unknown} (the filesystem's sysfs
     *                 entry could not be read)
     * @param switched the pool had full quotas and now has simple ones: every limit is gone
     * @param fallback why the pool has full quotas instead of simple ones, if it has
     * @param state    the kernel's report after the change, if readable
     */
    record Outcome(String mode, boolean switched, Optional<String> fallback, Optional<QuotaState> state) {
    }

    private PoolQuotas() {
    }

    static Outcome enable(Subvolumes subvolumes, Path pool, Path sysfs) {
        Optional<String> fsid = subvolumes.filesystemId(pool);
        Optional<QuotaState> before = fsid.flatMap(id -> QuotaState.read(sysfs, id));
        if (before.isPresent() && before.get().simple()) return new Outcome("squota", false, Optional.empty(), before);

        String unavailable = !QuotaState.kernelSupportsSimple(sysfs) ? "this kernel has no simple quotas (6.7 or later has them)"
                : !subvolumes.canEnableSimpleQuotas() ? "btrfs-progs cannot turn simple quotas on (6.7 or later can) and the ioctls are unavailable"
                : null;
        boolean switched = false;
        if (unavailable == null) {
            try {
                if (before.isPresent()) {
                    log.atWarn().addKeyValue("pool", pool).log("switching the pool from full qgroup accounting to simple quotas: "
                            + "quotas go off (dropping every root's limit, set again as sandboxes are reconciled) and come back simple; "
                            + "what the roots hold now is charged to none of them, only what they write from now on");
                    subvolumes.disableQuotas(pool);
                    switched = true;
                }
                subvolumes.enableSimpleQuotas(pool);
                var after = fsid.flatMap(id -> QuotaState.read(sysfs, id));
                String mode = fsid.isEmpty() ? "unknown" : after.map(QuotaState::mode).orElse("off");
                if (mode.equals("squota") || mode.equals("unknown")) return new Outcome(mode, switched, Optional.empty(), after);
                unavailable = "the kernel left the pool's quotas " + mode + " after turning simple quotas on";
            } catch (StasisException e) {
                unavailable = e.getMessage();
            }
        }
        enableFull(subvolumes, pool, unavailable);
        var after = fsid.flatMap(id -> QuotaState.read(sysfs, id));
        log.atWarn().addKeyValue("pool", pool).addKeyValue("reason", unavailable).log("simple quotas unavailable: the pool uses full qgroup "
                + "accounting, under which checkpoints, forks and hibernations get several times slower once sandboxes have been deleted "
                + "(every commit waits for shared extents to be traced), and a root's disk limit also counts the files it shares with "
                + "its template or checkpoint");
        return new Outcome(fsid.isEmpty() ? "unknown" : after.map(QuotaState::mode).orElse("off"), false, Optional.of(unavailable), after);
    }

    private static void enableFull(Subvolumes subvolumes, Path pool, String whyNotSimple) {
        try {
            subvolumes.enableQuotas(pool);
        } catch (StasisException e) {
            var details = new LinkedHashMap<String, Object>(e.details());
            details.put("pool", pool.toString());
            details.put("simpleQuotas", whyNotSimple);
            throw new StasisException(e.code(), "could not turn on btrfs quotas for the pool " + pool + " (sandbox disk limits need them): "
                    + e.getMessage() + "; simple quotas: " + whyNotSimple, details, e);
        }
    }
}
