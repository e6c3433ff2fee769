package io.stasis.e2b;

import io.stasis.sdk.Event;
import io.stasis.sdk.StasisClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * E2B's sandbox logs as Stasis's events of the sandbox (its lifecycle, processes, network
 * refusals...): one entry per event, oldest first, the event's type as its message and its data as
 * its fields. E2B's own logs come from the VM's agent; Stasis has no agent inside, so these are
 * what the service saw happen to the sandbox.
 */
final class E2bLogs {
    private static final int MAX_LIMIT = 1000;

    private E2bLogs() {
    }

    /** Entries from {@code startMillis} (Unix milliseconds; 0: the first), at most {@code limit}. */
    static List<Map<String, Object>> entries(StasisClient client, String sandbox, long startMillis, int limit) {
        int max = Math.min(Math.max(limit, 1), MAX_LIMIT);
        var out = new ArrayList<Map<String, Object>>();
        for (Event event : client.sandboxes().events(sandbox).all()) {
            if (event.at().toEpochMilli() < startMillis) continue;
            out.add(entry(event));
            if (out.size() >= max) break;
        }
        return out;
    }

    /** E2B's first form: plain lines beside the entries. */
    static Map<String, Object> v1(List<Map<String, Object>> entries) {
        var lines = entries.stream().map(e -> Map.of("timestamp", e.get("timestamp"), "line", e.get("message") + " " + e.get("fields"))).toList();
        return Map.of("logs", lines, "logEntries", entries);
    }

    private static Map<String, Object> entry(Event event) {
        var fields = new LinkedHashMap<String, String>();
        event.data().forEach((key, value) -> fields.put(key, String.valueOf(value)));
        fields.put("eventId", Long.toString(event.id()));
        return Map.of("timestamp", Instant.ofEpochMilli(event.at().toEpochMilli()).toString(), "level", level(event.type()),
                "message", event.type(), "fields", fields);
    }

    /** Refusals and failures are warnings; the rest information. */
    private static String level(String type) {
        return type.equals("error") ? "error" : type.contains("denied") ? "warn" : "info";
    }
}
