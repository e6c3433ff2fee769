package io.stasis.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.Signal;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.EnvVars;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxName;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DomainValidationTest {

    private static void invalid(Runnable action) {
        assertThatThrownBy(action::run).isInstanceOfSatisfying(StasisException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
    }

    @Test
    void sandboxIdsHaveTheirPrefixAndShape() {
        var id = SandboxId.random();
        assertThat(id.value()).matches("sbx_[0-9a-z]{16}");
        assertThat(SandboxId.isValid(id.value())).isTrue();
        for (String bad : List.of("sbx_", "sbx_ABCDEFGHIJKLMNOP", "box_0123456789abcdef", "sbx_0123456789abcde/", "sbx_../../etc/pass"))
            assertThat(SandboxId.isValid(bad)).as(bad).isFalse();
        assertThatThrownBy(() -> new SandboxId("nope")).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Upper", "-leading", "has space", "sbx_reserved", "a/b", "..",
            "a-very-long-name-that-goes-on-and-on-and-on-past-sixty-three-characters-x"})
    void badNamesAreRefused(String name) {
        invalid(() -> SandboxName.validate(name));
    }

    @Test
    void goodNamesPass() {
        assertThat(SandboxName.validate("agent-1.build_2")).isEqualTo("agent-1.build_2");
    }

    @Test
    void resourcesAreBounded() {
        invalid(() -> new Resources(0.01, 1024, 512));
        invalid(() -> new Resources(1, 8, 512));
        invalid(() -> new Resources(1, 1024, 2));
        invalid(() -> new Resources(Double.NaN, 1024, 512));
        assertThat(Resources.of(null, 256, null, null, Resources.DEFAULT)).isEqualTo(new Resources(1.0, 256, 512));
    }

    @Test
    void diskSizeIsBoundedAndNamedInTheError() {
        assertThatThrownBy(() -> new Resources(1, 1024, 512, 63)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.getMessage()).contains("resources.diskMb").contains("between 64 and 16777216").contains("was 63");
        });
        invalid(() -> new Resources(1, 1024, 512, (16 << 20) + 1));
        assertThat(new Resources(1, 1024, 512).diskMb()).isEqualTo(Resources.DEFAULT_DISK_MB);
        assertThat(Resources.of(null, null, null, 64, Resources.DEFAULT).diskBytes()).isEqualTo(64L << 20);
        assertThat(new Resources(1, 1024, 512, Resources.MAX_DISK_MB).diskBytes()).isEqualTo(16L << 40);
    }

    @Test
    void environmentAndMetadataAreChecked() {
        invalid(() -> EnvVars.validateEnv("env", Map.of("1X", "v")));
        invalid(() -> EnvVars.validateEnv("env", Map.of("A=B", "v")));
        invalid(() -> EnvVars.validateEnv("env", Map.of("X", "nul\0byte")));
        invalid(() -> EnvVars.validateMetadata(Map.of("bad key", "v")));
        assertThat(EnvVars.validateEnv("env", Map.of("PATH_2", "/x"))).containsEntry("PATH_2", "/x");
    }

    @Test
    void execRequestsAreChecked() {
        invalid(() -> new ExecRequest(List.of(), Optional.empty(), Map.of(), Optional.empty(), Duration.ofSeconds(1)));
        invalid(() -> new ExecRequest(List.of(""), Optional.empty(), Map.of(), Optional.empty(), Duration.ofSeconds(1)));
        invalid(() -> new ExecRequest(List.of("a\0b"), Optional.empty(), Map.of(), Optional.empty(), Duration.ofSeconds(1)));
        invalid(() -> new ExecRequest(List.of("ls"), Optional.of("relative"), Map.of(), Optional.empty(), Duration.ofSeconds(1)));
        invalid(() -> new ExecRequest(List.of("ls"), Optional.empty(), Map.of(), Optional.empty(), Duration.ZERO));
        invalid(() -> new ExecRequest(List.of("ls"), Optional.empty(), Map.of(), Optional.empty(), Duration.ofDays(2)));
        assertThat(ExecRequest.of("ls", "-l").timeout()).isEqualTo(ExecRequest.DEFAULT_TIMEOUT);
    }

    @Test
    void signalsAndExitStatuses() {
        assertThat(Signal.parse("sigterm")).isEqualTo(Signal.TERM);
        assertThat(Signal.parse("KILL").number()).isEqualTo(9);
        invalid(() -> Signal.parse("BOGUS"));
        assertThat(ExitStatus.killed(9)).isEqualTo(new ExitStatus(137, Optional.of("KILL")));
        assertThat(ExitStatus.exited(3).signal()).isEmpty();
    }

    @Test
    void sandboxPathsAreShapedNotResolved() {
        assertThat(new SandboxPath("root/a").value()).isEqualTo("/root/a");
        assertThat(new SandboxPath("/a/./b/../../../c").normalized()).isEqualTo("/c");
        assertThat(new SandboxPath("/a/../..").components()).containsExactly("a", "..", "..");
        assertThat(new SandboxPath("///").isRoot()).isTrue();
        invalid(() -> new SandboxPath(""));
        invalid(() -> new SandboxPath("/a\0b"));
        invalid(() -> new SandboxPath("/" + "x".repeat(SandboxPath.MAX_LENGTH)));
    }

    @Test
    void statesHaveTheirWireNames() {
        assertThat(List.of(SandboxState.RUNNING, SandboxState.PAUSED,
                new SandboxState.Hibernated(CheckpointId.random(), 10, Instant.EPOCH),
                new SandboxState.Stopped("processes_lost"), SandboxState.DELETED).stream().map(SandboxState::wireName))
                .containsExactly("running", "paused", "hibernated", "stopped", "deleted");
    }

    @Test
    void queriesAreBounded() {
        invalid(() -> new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 0, Optional.empty()));
        invalid(() -> new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 1001, Optional.empty()));
        invalid(() -> new SandboxQuery(Optional.of("exploded"), Map.of(), Optional.empty(), 10, Optional.empty()));
    }

    @Test
    void queriesAndSpecsCarryATenant() {
        var tenant = TenantId.random();
        assertThat(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 10, Optional.of(tenant)).tenant()).contains(tenant);
        assertThat(SandboxQuery.all().tenant()).isEmpty();
        assertThatThrownBy(() -> new SandboxSpec("tiny", Optional.empty(), Map.of(), Map.of(), Resources.DEFAULT,
                LifecyclePolicy.DEFAULT, Optional.empty(), null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void tenantIdsHaveTheirPrefixAndShape() {
        var id = TenantId.random();
        assertThat(id.value()).matches("ten_[0-9a-z]{16}");
        assertThat(TenantId.isValid("ten_default")).isTrue();
        for (String bad : Arrays.asList(null, "ten_", "ten_DEFAULT", "default", "ten_0123456789abcdeF", "sbx_0123456789abcdef", "ten_../x"))
            assertThat(TenantId.isValid(bad)).as(String.valueOf(bad)).isFalse();
        assertThatThrownBy(() -> new TenantId("ten_")).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Acme", "-acme", "acme corp", "acme_corp", "a/b",
            "a-very-long-tenant-name-that-goes-on-and-on-past-sixty-three-chars"})
    void badTenantNamesAreRefused(String name) {
        invalid(() -> Tenant.validateName(name));
    }

    @Test
    void anEventIsVisibleToItsTenantOrToEveryoneWhenItHasNone() {
        var a = TenantId.random();
        var b = TenantId.random();
        var ofA = new Event(1, Instant.EPOCH, "lifecycle", Optional.of(SandboxId.random()), Map.of(),
                Optional.of(a));
        var ofNone = new Event(2, Instant.EPOCH, "error", Optional.empty(), Map.of(), Optional.empty());
        assertThat(ofA.visibleTo(a)).isTrue();
        assertThat(ofA.visibleTo(b)).isFalse();
        assertThat(ofNone.visibleTo(a)).isTrue();
        assertThat(ofNone.visibleTo(TenantId.DEFAULT)).isTrue();
    }

    @Test
    void errorCodesHaveStableSnakeCaseNames() {
        assertThat(ErrorCode.SANDBOX_NOT_FOUND.wireName()).isEqualTo("sandbox_not_found");
        for (ErrorCode code : ErrorCode.values()) assertThat(code.wireName()).matches("[a-z]+(_[a-z]+)*");
    }
}
