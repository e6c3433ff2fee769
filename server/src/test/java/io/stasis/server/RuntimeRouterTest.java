package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.testkit.fake.FakeSandboxRuntime;
import io.stasis.testkit.fake.FakeSandboxRuntime.Step;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Every call reaches the runtime its sandbox runs in: by the spec's runtime at a start, by the sandbox after. */
class RuntimeRouterTest {
    private final FakeSandboxRuntime runc = new FakeSandboxRuntime();
    private final FakeSandboxRuntime gvisor = new FakeSandboxRuntime();

    private static RuntimeSpec spec(SandboxId id, RuntimeKind kind) {
        return new RuntimeSpec(id, Path.of("/nonexistent", id.value()), id.hostname(), Resources.DEFAULT, Optional.empty(), List.of(), kind);
    }

    private RuntimeRouter router() {
        return new RuntimeRouter(Map.of(RuntimeKind.RUNC, runc, RuntimeKind.GVISOR, gvisor), RuntimeKind.RUNC);
    }

    @Test
    void aSandboxStartsInTheRuntimeItsSpecNamesAndEveryLaterCallGoesThere() {
        var router = router();
        var a = SandboxId.random();
        var b = SandboxId.random();
        router.create(spec(a, RuntimeKind.GVISOR));
        router.create(spec(b, RuntimeKind.RUNC));
        assertThat(gvisor.listOwned()).containsExactly(a);
        assertThat(runc.listOwned()).containsExactly(b);

        router.freeze(a);
        assertThat(gvisor.calls(Step.FREEZE)).isOne();
        assertThat(runc.calls(Step.FREEZE)).isZero();
        assertThat(router.status(a)).isEqualTo(RuntimeStatus.FROZEN);
        assertThat(router.status(b)).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(router.listOwned()).containsExactlyInAnyOrder(a, b);

        router.destroy(a);
        assertThat(gvisor.listOwned()).isEmpty();
        assertThat(router.status(a)).isEqualTo(RuntimeStatus.UNKNOWN);
    }

    @Test
    void aRestartedServiceFindsEachSandboxInTheRuntimeThatOwnsIt() {
        var id = SandboxId.random();
        gvisor.create(spec(id, RuntimeKind.GVISOR));
        var router = router();
        router.stop(id, Duration.ZERO);
        assertThat(gvisor.calls(Step.STOP)).isOne();
        assertThat(runc.calls(Step.STOP)).isZero();
    }

    @Test
    void aRestoreGoesToTheRuntimeOfItsSpec() {
        var router = router();
        var id = SandboxId.random();
        router.create(spec(id, RuntimeKind.GVISOR));
        var image = CheckpointId.random();
        router.checkpoint(id, image, false);
        assertThat(gvisor.calls(Step.CHECKPOINT)).isOne();
        var fork = SandboxId.random();
        router.restore(spec(fork, RuntimeKind.GVISOR), image);
        assertThat(gvisor.calls(Step.RESTORE)).isOne();
        assertThat(runc.calls(Step.RESTORE)).isZero();
    }

    @Test
    void aFailedStartLeavesTheSandboxToNoRuntime() {
        var router = router();
        var id = SandboxId.random();
        gvisor.failNext(Step.CREATE);
        assertThatThrownBy(() -> router.create(spec(id, RuntimeKind.GVISOR))).isInstanceOf(StasisException.class);
        assertThat(router.status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(router.listOwned()).isEmpty();
    }

    @Test
    void aRuntimeTheServiceDoesNotRunIsRefused() {
        var router = new RuntimeRouter(Map.of(RuntimeKind.RUNC, runc), RuntimeKind.RUNC);
        assertThatThrownBy(() -> router.create(spec(SandboxId.random(), RuntimeKind.GVISOR)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED))
                .hasMessageContaining("does not run gvisor sandboxes");
        assertThat(runc.calls(Step.CREATE)).isZero();
    }
}
