package io.stasis.core.volume;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The archive's record of a volume sync, a persisted format read by every instance sharing the
 * store: {@code key=value} lines in a fixed order, streams comma-separated, {@code format=1}.
 * {@code VolumeSyncRecordTest} pins it with a golden file.
 */
final class VolumeSyncRecord {
    static final String FORMAT = "1";

    private VolumeSyncRecord() {
    }

    static byte[] encode(VolumeSync s) {
        var lines = new LinkedHashMap<String, String>();
        lines.put("format", FORMAT);
        lines.put("id", s.id().value());
        lines.put("volume", s.volume().value());
        lines.put("volumeName", s.volumeName());
        lines.put("sizeMb", Long.toString(s.sizeMb()));
        lines.put("streams", String.join(",", s.streams()));
        lines.put("parent", s.parent().map(VolumeSyncId::value).orElse(""));
        lines.put("streamBytes", Long.toString(s.streamBytes()));
        lines.put("createdAt", s.createdAt().toString());
        var out = new StringBuilder();
        lines.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** {@code internal} if the bytes are not such a record. */
    static VolumeSync decode(byte[] bytes) {
        var map = new LinkedHashMap<String, String>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) map.put(line.substring(0, eq), line.substring(eq + 1));
        }
        try {
            String parent = map.getOrDefault("parent", "");
            return new VolumeSync(new VolumeSyncId(map.get("id")), new VolumeId(map.get("volume")), map.get("volumeName"),
                    Long.parseLong(map.get("sizeMb")), List.of(map.get("streams").split(",")),
                    parent.isEmpty() ? Optional.empty() : Optional.of(new VolumeSyncId(parent)), map.get("id"),
                    Long.parseLong(map.get("streamBytes")), Instant.parse(map.get("createdAt")));
        } catch (RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "unreadable volume sync record: " + e.getMessage(), Map.of(), e);
        }
    }
}
