package io.stasis.core.volume;

import io.stasis.core.sandbox.RuntimeKind;
import static io.stasis.testkit.core.CoreOnFakes.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.lifecycle.LifecycleService.Reason;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.core.CoreOnFakes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Volumes on the fakes: names, snapshots, syncs to the durable store, and deletes while mounted. */
class VolumeServiceTest {
    private static final TenantId TENANT = TenantId.DEFAULT;

    @TempDir
    Path dir;
    private CoreOnFakes core;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir.resolve("here"));
    }

    @AfterEach
    void stop() {
        core.close();
    }

    private Path pathOf(CoreOnFakes core, Volume volume) {
        return core.host.volumeStore().path(volume.id()).orElseThrow();
    }

    private Volume volumeWithAFile(String name) throws IOException {
        var volume = core.volumes.create(TENANT, name, Optional.of(64L), new VolumeService.Source.Empty());
        Files.writeString(pathOf(core, volume).resolve("data.txt"), "v1");
        return volume;
    }

    @Test
    void aNameIsTakenOncePerTenant() throws IOException {
        var volume = volumeWithAFile("data");
        assertThat(core.volumes.get(TENANT, "data")).isEqualTo(volume);
        assertThatThrownBy(() -> core.volumes.create(TENANT, "data", Optional.empty(), new VolumeService.Source.Empty()))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NAME_TAKEN));
        assertThat(core.volumes.list(TENANT)).containsExactly(volume);
    }

    @Test
    void aVolumeFromASnapshotHoldsTheContentOfThen() throws IOException {
        var volume = volumeWithAFile("data");
        var snapshot = core.volumes.snapshot(TENANT, "data");
        Files.writeString(pathOf(core, volume).resolve("data.txt"), "v2");

        var copy = core.volumes.create(TENANT, "copy", Optional.empty(), new VolumeService.Source.FromSnapshot(snapshot.id().value()));

        assertThat(pathOf(core, copy).resolve("data.txt")).hasContent("v1");
        assertThat(pathOf(core, volume).resolve("data.txt")).hasContent("v2");
    }

    @Test
    void aSyncedVolumeComesBackOnAnotherHostWithItsLatestContent() throws IOException {
        var volume = volumeWithAFile("data");
        core.volumes.sync(TENANT, "data");
        Files.writeString(pathOf(core, volume).resolve("data.txt"), "v2");
        Files.writeString(pathOf(core, volume).resolve("more.txt"), "added");
        var second = core.volumes.sync(TENANT, "data");
        assertThat(core.volumes.syncs(TENANT, "data")).hasSize(2);

        try (var elsewhere = new CoreOnFakes(CoreOnFakes.Host.sharing(dir.resolve("there"), core.host.archive(),
                core.host.volumeArchive()), 0)) {
            var copy = elsewhere.volumes.create(TENANT, "data", Optional.empty(), new VolumeService.Source.FromSync(second.id().value()));

            assertThat(pathOf(elsewhere, copy).resolve("data.txt")).hasContent("v2");
            assertThat(pathOf(elsewhere, copy).resolve("more.txt")).hasContent("added");
        }
    }

    @Test
    void aMountedVolumeIsDeletedOnlyByForceWhichStopsItsSandboxes() throws IOException {
        volumeWithAFile("data");
        var mounts = core.volumes.resolveMounts(TENANT, List.of(new VolumeService.MountRequest("data", "/data", false)));
        var sandbox = core.sandboxes.create(new SandboxSpec(CoreOnFakes.TEMPLATE, Optional.empty(), Map.of(), Map.of(),
                Resources.DEFAULT, LifecyclePolicy.DEFAULT, Optional.empty(), TENANT, mounts, List.of(), RuntimeKind.RUNC));
        assertThat(core.runtime.spec(sandbox.id()).orElseThrow().mounts()).extracting(m -> m.destination()).contains("/data");

        assertThatThrownBy(() -> core.volumes.delete(TENANT, "data", false, id -> { }))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_STATE))
                .hasMessageContaining(sandbox.id().value());
        assertThat(core.volumes.list(TENANT)).hasSize(1);

        var stopped = new ArrayList<SandboxId>();
        core.volumes.delete(TENANT, "data", true, id -> {
            stopped.add(id);
            core.lifecycle.stop(id, Reason.API);
        });

        assertThat(stopped).containsExactly(sandbox.id());
        assertThat(core.volumes.list(TENANT)).isEmpty();
        assertThat(core.volumes.mountsOf(sandbox.id())).isEmpty();
        core.lifecycle.start(sandbox.id(), Reason.API);
        assertThat(core.runtime.spec(sandbox.id()).orElseThrow().mounts()).as("it starts without the volume")
                .extracting(m -> m.destination()).doesNotContain("/data");
    }
}
