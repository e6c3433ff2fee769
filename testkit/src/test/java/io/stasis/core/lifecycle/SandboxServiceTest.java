package io.stasis.core.lifecycle;

import static io.stasis.testkit.core.CoreOnFakes.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.testkit.core.CoreOnFakes;
import io.stasis.testkit.fake.FakeSandboxRuntime.Step;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Creating and deleting sandboxes: what each leaves in the catalog, the root store, the runtime and the network. */
class SandboxServiceTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir);
    }

    @AfterEach
    void stop() {
        core.close();
    }

    @Test
    void aCreatedSandboxRunsOnItsOwnRootAndNetwork() {
        var sandbox = core.create(Optional.of("first"));

        assertThat(sandbox.state()).isEqualTo(new SandboxState.Running());
        assertThat(core.catalog.find(sandbox.id())).contains(sandbox);
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
        var root = core.roots.root(sandbox.id()).orElseThrow();
        assertThat(core.runtime.spec(sandbox.id()).orElseThrow().root()).isEqualTo(root);
        assertThat(root.resolve("etc/version")).hasContent("1");
        assertThat(core.hostNetwork.listOpen()).containsExactly(sandbox.id());
        assertThat(core.catalog.findNetwork(sandbox.id())).isPresent();
        assertThat(core.sandboxes.get("first")).isEqualTo(sandbox);
    }

    @Test
    void aNameIsTakenOncePerTenantAndTheLoserLeavesNothing() {
        core.create(Optional.of("same"));
        var before = core.runtime.listOwned();

        assertThatThrownBy(() -> core.create(Optional.of("same"))).satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NAME_TAKEN));

        assertThat(core.runtime.listOwned()).isEqualTo(before);
        assertThat(core.roots.listRoots()).hasSize(1);
        assertThat(core.hostNetwork.listOpen()).hasSize(1);
    }

    @Test
    void aRuntimeThatFailsToStartLeavesNoRecordRootOrNetwork() {
        core.runtime.failNext(Step.CREATE);

        assertThatThrownBy(() -> core.create(Optional.of("broken")))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.RUNTIME_FAILED));

        assertThat(core.catalog.all()).isEmpty();
        assertThat(core.roots.listRoots()).isEmpty();
        assertThat(core.hostNetwork.listOpen()).isEmpty();
        assertThat(core.catalog.allNetworks()).isEmpty();
        assertThat(core.catalog.pendingOperations()).isEmpty();
    }

    @Test
    void anUnknownTemplateIsRefusedBeforeAnythingIsMade() {
        var spec = new SandboxSpec("no-such-template", Optional.empty(), Map.of(), Map.of(), Resources.DEFAULT, LifecyclePolicy.DEFAULT,
                Optional.empty(), TenantId.DEFAULT);

        assertThatThrownBy(() -> core.sandboxes.create(spec)).satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.TEMPLATE_NOT_FOUND));
        assertThat(core.runtime.calls(Step.CREATE)).isZero();
    }

    @Test
    void deletingASandboxRemovesEverythingItHad() {
        var sandbox = core.create(Optional.of("gone"));

        core.sandboxes.delete(sandbox.id().value());

        assertThat(core.catalog.find(sandbox.id())).isEmpty();
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(core.roots.root(sandbox.id())).isEmpty();
        assertThat(core.hostNetwork.listOpen()).isEmpty();
        assertThat(core.catalog.allNetworks()).isEmpty();
        assertThatThrownBy(() -> core.sandboxes.get("gone")).satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
    }

    @Test
    void aDiskAboveTheHostsLargestIsRefusedBeforeAnythingIsMade() {
        var huge = new Resources(1.0, 1024, 512, CoreOnFakes.MAX_DISK_MB + 1);
        var spec = new SandboxSpec(CoreOnFakes.TEMPLATE, Optional.empty(), Map.of(), Map.of(), huge, LifecyclePolicy.DEFAULT,
                Optional.empty(), TenantId.DEFAULT);

        assertThatThrownBy(() -> core.sandboxes.create(spec)).satisfies(e -> {
            assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e).hasMessageContaining("--max-disk-mb");
        });
        assertThat(core.roots.listRoots()).isEmpty();
    }

    @Test
    void aCreateInARuntimeItsTenantIsNotAllowedIsRefusedBeforeAnythingIsMade() {
        var held = new Tenant(TenantId.random(), "held", new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.of(Set.of(RuntimeKind.GVISOR))), core.clock.instant());
        core.catalog.insertTenant(held);
        var spec = new SandboxSpec(CoreOnFakes.TEMPLATE, Optional.empty(), Map.of(), Map.of(), Resources.DEFAULT, LifecyclePolicy.DEFAULT,
                Optional.empty(), held.id(), List.of(), List.of(), RuntimeKind.RUNC);

        assertThatThrownBy(() -> core.sandboxes.create(spec)).satisfies(e -> {
            assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN);
            assertThat(e).hasMessageContaining("only in gvisor");
        });
        assertThat(core.roots.listRoots()).isEmpty();
        assertThat(core.catalog.all()).isEmpty();
    }

    @Test
    void aWarmSandboxBecomesTheCreatedOneWithoutAStartOfItsOwn() {
        core.close();
        core = new CoreOnFakes(CoreOnFakes.Host.in(dir.resolve("warm")), 1);
        core.pool.refill(CoreOnFakes.TEMPLATE);
        int startsBefore = core.runtime.calls(Step.CREATE);

        var sandbox = core.create();

        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(core.catalog.find(sandbox.id())).isPresent();
        assertThat(core.runtime.calls(Step.CREATE)).as("the create took the warm one; the pool refills behind it").isGreaterThanOrEqualTo(startsBefore);
    }
}
