package io.stasis.catalog.sql;

/**
 * How many events the catalog keeps: after every {@code trimEvery} appends (and once when the
 * catalog opens) it deletes all but the newest {@code keepNewest}, so the table holds at most
 * {@code keepNewest + trimEvery - 1} events. The trim is one range delete on the primary key
 * (the catalog only ever deletes events from the old end, so ids stay contiguous and "the newest
 * N" is "id above newest - N"): its cost is the rows it removes, about {@code trimEvery} of them.
 *
 * @param keepNewest events kept after a trim, at least 1
 * @param trimEvery  appends between trims, at least 1
 */
public record EventRetention(long keepNewest, int trimEvery) {
    /** The newest 100 000 events (tens of MB at most), trimmed every 1000 appends. */
    public static final EventRetention DEFAULT = new EventRetention(100_000, 1_000);
    /** Keeps every event forever. */
    public static final EventRetention UNBOUNDED = new EventRetention(Long.MAX_VALUE, Integer.MAX_VALUE);

    public EventRetention {
        if (keepNewest < 1) throw new IllegalArgumentException("keepNewest must be at least 1, was " + keepNewest);
        if (trimEvery < 1) throw new IllegalArgumentException("trimEvery must be at least 1, was " + trimEvery);
    }

    boolean bounded() {
        return keepNewest != Long.MAX_VALUE;
    }
}
