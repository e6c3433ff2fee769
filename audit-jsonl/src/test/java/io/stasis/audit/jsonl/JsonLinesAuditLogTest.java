package io.stasis.audit.jsonl;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.audit.AuditEntry;
import io.stasis.core.audit.AuditQuery;
import io.stasis.core.spi.AuditLog;
import io.stasis.testkit.AuditLogSuite;
import io.stasis.testkit.MutableClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The contract on real files, and what files add: rotation, a restart, a line a crash cut short. */
class JsonLinesAuditLogTest extends AuditLogSuite {
    @TempDir
    Path dir;
    private final MutableClock clock = new MutableClock();
    private JsonLinesAuditLog log;

    @BeforeEach
    void open() {
        log = new JsonLinesAuditLog(dir, 1 << 20, 4, clock);
    }

    @AfterEach
    void close() {
        log.close();
    }

    @Override
    protected AuditLog log() {
        return log;
    }

    private long files() throws IOException {
        try (var list = Files.list(dir)) {
            return list.count();
        }
    }

    @Test
    void aFullFileMakesWayForANewOneAndTheOldestGoPastTheOnesKept() throws Exception {
        log.close();
        log = new JsonLinesAuditLog(dir, 400, 3, clock);
        var appended = new ArrayList<AuditEntry>();
        for (int i = 0; i < 40; i++) {
            var entry = call(i, ACME, "key_a", "sbx_x", 200);
            appended.add(entry);
            log.append(entry);
        }
        assertThat(files()).isEqualTo(3);
        var listed = new ArrayList<AuditEntry>();
        var page = log.query(AuditQuery.all(3));
        listed.addAll(page.items());
        while (page.nextCursor().isPresent()) {
            page = log.query(AuditQuery.all(3).withCursor(page.nextCursor().get()));
            listed.addAll(page.items());
        }
        assertThat(listed).isNotEmpty().hasSizeLessThan(40);
        assertThat(listed).containsExactlyElementsOf(appended.reversed().subList(0, listed.size()));
    }

    @Test
    void aRestartGoesOnInTheSameFileAndALineACrashCutShortIsSkipped() throws Exception {
        log.append(call(1, ACME, "key_a", "sbx_x", 200));
        log.close();
        Path only;
        try (var list = Files.list(dir)) {
            only = list.findFirst().orElseThrow();
        }
        Files.writeString(only, "{\"at\":\"2026-12-05T12:00:0", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        log = new JsonLinesAuditLog(dir, 1 << 20, 4, clock);
        log.append(call(2, ACME, "key_a", "sbx_x", 200));
        assertThat(files()).isEqualTo(1);
        assertThat(log.query(AuditQuery.all(10)).items()).containsExactly(call(2, ACME, "key_a", "sbx_x", 200), call(1, ACME, "key_a", "sbx_x", 200));
    }

    @Test
    void aLineHoldsOnlyWhatTheEntrySays() throws Exception {
        log.append(egress(1, ACME, "sbx_aaaaaaaaaaaaaaaa", false));
        String text;
        try (var list = Files.list(dir)) {
            text = Files.readString(list.findFirst().orElseThrow());
        }
        assertThat(text).isEqualTo("{\"at\":\"2026-12-05T12:00:01Z\",\"kind\":\"egress\",\"tenant\":\"ten_acme000000000000\","
                + "\"sandbox\":\"sbx_aaaaaaaaaaaaaaaa\",\"decision\":\"denied\",\"domain\":\"example.com\",\"address\":\"93.184.216.34\","
                + "\"port\":443,\"protocol\":\"tls\",\"rule\":\"default deny\"}\n");
    }
}
