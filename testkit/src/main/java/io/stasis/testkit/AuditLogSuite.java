package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.audit.AuditEntry;
import io.stasis.core.audit.AuditQuery;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.AuditLog;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The contract of an {@link AuditLog}: what is appended is listed newest first, filtered, in pages that miss nothing. */
public abstract class AuditLogSuite {
    protected static final Instant T0 = Instant.parse("2026-12-05T12:00:00Z");
    protected static final TenantId ACME = new TenantId("ten_acme000000000000");
    protected static final TenantId OTHER = new TenantId("ten_other00000000000");

    protected abstract AuditLog log();

    public static AuditEntry.Call call(int second, TenantId tenant, String credential, String resource, int status) {
        return new AuditEntry.Call(T0.plusSeconds(second), Optional.of(tenant), Optional.of(credential), false, "POST",
                "/v1/sandboxes/{id}/exec", "/v1/sandboxes/" + resource + "/exec", Optional.of(resource), status,
                status < 400 ? "ok" : "sandbox_not_found", "req_" + second);
    }

    public static AuditEntry.Egress egress(int second, TenantId tenant, String sandbox, boolean allowed) {
        return new AuditEntry.Egress(T0.plusSeconds(second), Optional.of(tenant), new SandboxId(sandbox), allowed, Optional.of("example.com"),
                Optional.of("93.184.216.34"), 443, "tls", allowed ? "allow example.com" : "default deny");
    }

    private AuditQuery query() {
        return AuditQuery.all(100);
    }

    @Test
    void everyEntryComesBackWholeNewestFirst() {
        var refused = new AuditEntry.Call(T0, Optional.empty(), Optional.empty(), false, "GET", "/v1/sandboxes", "/v1/sandboxes",
                Optional.empty(), 401, "unauthenticated", "req_0");
        var root = new AuditEntry.Call(T0.plusSeconds(1), Optional.of(TenantId.DEFAULT), Optional.of("key_root"), true, "DELETE",
                "/v1/tenants/{tid}", "/v1/tenants/ten_x", Optional.of("ten_x"), 204, "ok", "req_1");
        var e = egress(2, ACME, "sbx_aaaaaaaaaaaaaaaa", false);
        for (var entry : List.of(refused, root, e)) log().append(entry);
        assertThat(log().query(query()).items()).containsExactly(e, root, refused);
    }

    @Test
    void filtersByTenantKindTimeSandboxAndCredential() {
        var a = call(1, ACME, "key_a", "sbx_aaaaaaaaaaaaaaaa", 200);
        var b = call(2, OTHER, "key_b", "sbx_bbbbbbbbbbbbbbbb", 404);
        var c = egress(3, ACME, "sbx_aaaaaaaaaaaaaaaa", true);
        var d = call(4, ACME, "tok_t", "sbx_cccccccccccccccc", 200);
        for (var entry : List.of(a, b, c, d)) log().append(entry);
        assertThat(log().query(query().withTenant(ACME)).items()).containsExactly(d, c, a);
        var kinds = new AuditQuery(Optional.empty(), Optional.of("egress"), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), 10, Optional.empty());
        assertThat(log().query(kinds).items()).containsExactly(c);
        var window = new AuditQuery(Optional.empty(), Optional.empty(), Optional.of(T0.plusSeconds(2)), Optional.of(T0.plusSeconds(4)),
                Optional.empty(), Optional.empty(), 10, Optional.empty());
        assertThat(log().query(window).items()).containsExactly(c, b);
        var sandbox = new AuditQuery(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.of("sbx_aaaaaaaaaaaaaaaa"),
                Optional.empty(), 10, Optional.empty());
        assertThat(log().query(sandbox).items()).containsExactly(c, a);
        var credential = new AuditQuery(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.of("tok_t"), 10, Optional.empty());
        assertThat(log().query(credential).items()).containsExactly(d);
    }

    @Test
    void pagesFollowEachOtherAndMissNothing() {
        var appended = new ArrayList<AuditEntry>();
        for (int i = 0; i < 25; i++) {
            var entry = i % 3 == 0 ? egress(i, ACME, "sbx_aaaaaaaaaaaaaaaa", true) : call(i, i % 2 == 0 ? ACME : OTHER, "key_a", "sbx_x", 200);
            appended.add(entry);
            log().append(entry);
        }
        var seen = new ArrayList<AuditEntry>();
        var page = log().query(AuditQuery.all(7));
        seen.addAll(page.items());
        while (page.nextCursor().isPresent()) {
            page = log().query(AuditQuery.all(7).withCursor(page.nextCursor().get()));
            seen.addAll(page.items());
        }
        assertThat(seen).containsExactlyElementsOf(appended.reversed());
        var acme = log().query(new AuditQuery(Optional.of(ACME), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), 4, Optional.empty()));
        assertThat(acme.items()).hasSize(4).allMatch(e -> e.tenant().equals(Optional.of(ACME)));
        var rest = log().query(new AuditQuery(Optional.of(ACME), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), 100, acme.nextCursor()));
        assertThat(rest.items()).doesNotContainAnyElementsOf(acme.items()).allMatch(e -> e.tenant().equals(Optional.of(ACME)));
        assertThat(acme.items().size() + rest.items().size()).isEqualTo((int) appended.stream().filter(e -> e.tenant().equals(Optional.of(ACME))).count());
    }

    @Test
    void aCursorItDidNotHandOutIsInvalid() {
        log().append(call(1, ACME, "key_a", "sbx_x", 200));
        assertThatThrownBy(() -> log().query(AuditQuery.all(10).withCursor("../../etc/passwd")))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
        assertThatThrownBy(() -> AuditQuery.all(0)).isInstanceOf(StasisException.class);
        assertThatThrownBy(() -> new AuditQuery(Optional.empty(), Optional.of("everything"), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), 10, Optional.empty())).isInstanceOf(StasisException.class);
    }
}
