package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link RootStore} must do: roots from templates, checkpoint snapshots and the roots
 * branched from them, replaced roots, send streams, templates, and the errors of each. A backend's
 * test extends this and supplies fresh stores; the suite installs the template {@value #TEMPLATE}
 * ({@link TestRecipe}) into the first one before each test.
 *
 * <p>Not here, because a fake on plain directories cannot honestly do them: read-only templates
 * and snapshots, enforced disk limits, constant-time snapshots. The btrfs adapter's own tests
 * cover those.
 */
public abstract class RootStoreSuite {
    /** The template every test's store has. */
    protected static final String TEMPLATE = "tiny";
    /** A disk limit for tests that do not test limits: room enough for anything they write. */
    protected static final long DISK = 4L << 30;

    private RootStore store;

    /**
     * A new store holding nothing, not even a template. Called once before each test, and again by
     * tests that need a second host (to receive a stream); the runner removes every store it made
     * after the test.
     */
    protected abstract RootStore newStore();

    /** Who a template's files belong to; by default the user running the test, which needs no privilege. */
    protected FileOwner owner() {
        return TestFiles.currentUser();
    }

    protected RootStore store() {
        return store;
    }

    @BeforeEach
    void openStoreWithTemplate() {
        store = newStore();
        store.installTemplate(TestRecipe.of(TEMPLATE, "1"), owner(), TemplateRecipe.Progress.NONE);
    }

    // --- roots from templates ---

    @Test
    void aRootHoldsTheTemplatesFilesOwnedByTheTemplatesOwner() throws Exception {
        var id = SandboxId.random();
        Path root = store.createRoot(id, TEMPLATE, DISK);

        assertThat(store.root(id)).contains(root);
        assertThat(root.resolve("etc/version")).hasContent("1");
        assertThat(root.resolve("etc/hostname")).hasContent("template\n");
        assertThat(Files.size(root.resolve("bin/blob"))).isEqualTo(TestRecipe.BLOB_BYTES);
        assertThat(Files.readSymbolicLink(root.resolve("etc/host-passwd"))).isEqualTo(Path.of("/etc/passwd"));
        assertThat((Integer) Files.getAttribute(root.resolve("bin/su"), "unix:mode") & 07777).as("setuid kept").isEqualTo(04755);
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : all.toList()) {
                assertThat(Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS)).as(p.toString()).isEqualTo(owner().uid());
                assertThat(Files.getAttribute(p, "unix:gid", LinkOption.NOFOLLOW_LINKS)).as(p.toString()).isEqualTo(owner().gid());
            }
        }
        assertThat(Files.getAttribute(Path.of("/etc/passwd"), "unix:uid")).as("the link's target is the host's").isEqualTo(0);
    }

    @Test
    void writesInARootStayInThatRoot() throws Exception {
        var first = SandboxId.random();
        Path root = store.createRoot(first, TEMPLATE, DISK);
        Files.writeString(root.resolve("etc/version"), "changed in the sandbox");
        Files.writeString(root.resolve("etc/new"), "new");
        Files.delete(root.resolve("bin/blob"));

        Path other = store.createRoot(SandboxId.random(), TEMPLATE, DISK);
        assertThat(other).isNotEqualTo(root);
        assertThat(other.resolve("etc/version")).as("the template is unchanged").hasContent("1");
        assertThat(other.resolve("etc/new")).doesNotExist();
        assertThat(other.resolve("bin/blob")).exists();
    }

    @Test
    void aRootOfAnUnknownTemplateIsTemplateNotFound() {
        for (String template : List.of("nope", "../roots", "", "Tiny")) {
            var id = SandboxId.random();
            assertFails(() -> store.createRoot(id, template, DISK), ErrorCode.TEMPLATE_NOT_FOUND);
            assertThat(store.root(id)).as(template).isEmpty();
        }
        assertThat(store.listRoots()).isEmpty();
    }

    @Test
    void aSecondRootForTheSameSandboxIsRefusedAndTheFirstKept() throws Exception {
        var id = SandboxId.random();
        Path root = store.createRoot(id, TEMPLATE, DISK);
        Files.writeString(root.resolve("mine"), "kept");

        assertFails(() -> store.createRoot(id, TEMPLATE, DISK), ErrorCode.RUNTIME_FAILED,
                e -> assertThat(e.details()).containsEntry("sandbox", id.value()));
        assertThat(root.resolve("mine")).hasContent("kept");
        assertThat(store.listRoots()).containsExactly(id);
    }

    @Test
    void rootsAreListedAndDeletedIdempotently() {
        assertThat(store.listRoots()).isEmpty();
        var ids = new ArrayList<SandboxId>();
        for (int i = 0; i < 3; i++) {
            var id = SandboxId.random();
            store.createRoot(id, TEMPLATE, DISK);
            ids.add(id);
        }
        assertThat(store.listRoots()).containsExactlyInAnyOrderElementsOf(ids);

        Path root = store.root(ids.getFirst()).orElseThrow();
        store.deleteRoot(ids.getFirst());
        store.deleteRoot(ids.getFirst());
        assertThat(root).doesNotExist();
        assertThat(store.root(ids.getFirst())).isEmpty();
        assertThat(store.listRoots()).containsExactlyInAnyOrderElementsOf(ids.subList(1, 3));

        store.deleteRoot(SandboxId.random()); // never had one
        for (var id : ids) store.deleteRoot(id);
        assertThat(store.listRoots()).isEmpty();
    }

    @Test
    void aRootsDiskLimitCanBeChangedButNotForAMissingRoot() {
        var id = SandboxId.random();
        store.createRoot(id, TEMPLATE, DISK);
        store.limitRoot(id, DISK / 2);
        store.limitRoot(id, DISK / 2); // idempotent
        store.limitRoot(id, DISK);

        var missing = SandboxId.random();
        assertFails(() -> store.limitRoot(missing, DISK), ErrorCode.RUNTIME_FAILED,
                e -> assertThat(e.details()).containsEntry("sandbox", missing.value()));
        assertThat(store.root(missing)).isEmpty();
    }

    @Test
    void aRootsDiskUsageCountsWhatItWritesAndAMissingRootHasNone() throws Exception {
        var id = SandboxId.random();
        Path root = store.createRoot(id, TEMPLATE, DISK);
        long before = store.diskUsage(id).orElseThrow().writtenBytes();
        byte[] written = new byte[1 << 20];
        new Random(7).nextBytes(written);
        Files.write(root.resolve("etc/new"), written); // not synced: what is waiting to be written counts too
        var after = store.diskUsage(id).orElseThrow();
        assertThat(after.writtenBytes()).isGreaterThanOrEqualTo(before + written.length);
        assertThat(after.inheritedBytes()).as("a root from a template inherits nothing").isZero();
        assertThat(after.totalBytes()).isEqualTo(after.writtenBytes());
        assertThat(store.diskUsage(SandboxId.random())).isEmpty();
    }

    @Test
    void aDiskLimitMustBePositive() {
        var id = SandboxId.random();
        store.createRoot(id, TEMPLATE, DISK);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(id, checkpoint);
        var other = SandboxId.random();
        for (long limit : new long[] {0, -1}) {
            assertFails(() -> store.createRoot(other, TEMPLATE, limit), ErrorCode.RUNTIME_FAILED);
            assertFails(() -> store.createRootFrom(other, checkpoint, limit), ErrorCode.RUNTIME_FAILED);
            assertFails(() -> store.replaceRoot(id, checkpoint, limit), ErrorCode.RUNTIME_FAILED);
            assertFails(() -> store.limitRoot(id, limit), ErrorCode.RUNTIME_FAILED);
        }
        assertThat(store.listRoots()).containsExactly(id);
        store.deleteReplacedRoot(id); // nothing was put aside
        assertThat(store.root(id)).isPresent();
    }

    // --- templates ---

    @Test
    void templatesListWhatWasInstalled() {
        Instant before = Instant.now().minusSeconds(60);
        var image = store.template(TEMPLATE).orElseThrow();
        assertThat(image.name()).isEqualTo(TEMPLATE);
        assertThat(image.version()).isEqualTo("1");
        assertThat(image.sizeBytes()).isGreaterThanOrEqualTo(TestRecipe.BLOB_BYTES);
        assertThat(store.templates()).containsExactly(image);
        assertThat(store.template("nope")).isEmpty();

        var other = store.installTemplate(TestRecipe.of("other", "7"), owner(), TemplateRecipe.Progress.NONE);
        assertThat(other.name()).isEqualTo("other");
        assertThat(other.version()).isEqualTo("7");
        assertThat(other.builtAt()).isAfter(before);
        assertThat(store.templates()).containsExactlyInAnyOrder(image, other);
        assertThat(store.createRoot(SandboxId.random(), "other", DISK).resolve("etc/version")).hasContent("7");
    }

    @Test
    void aNewVersionReplacesTheTemplateAndOlderRootsKeepTheirFiles() {
        var fromV1 = SandboxId.random();
        store.createRoot(fromV1, TEMPLATE, DISK);

        var v2 = store.installTemplate(TestRecipe.of(TEMPLATE, "2"), owner(), TemplateRecipe.Progress.NONE);
        assertThat(store.templates()).containsExactly(v2);
        assertThat(store.template(TEMPLATE).orElseThrow().version()).isEqualTo("2");
        assertThat(store.createRoot(SandboxId.random(), TEMPLATE, DISK).resolve("etc/version")).hasContent("2");
        assertThat(store.root(fromV1).orElseThrow().resolve("etc/version")).hasContent("1");
    }

    @Test
    void aFailedBuildKeepsThePreviousVersion() {
        assertFails(() -> store.installTemplate(TestRecipe.failing(TEMPLATE, "2"), owner(), TemplateRecipe.Progress.NONE),
                ErrorCode.RUNTIME_FAILED, e -> assertThat(e.getMessage()).contains("broke on purpose"));
        assertThat(store.templates()).singleElement().satisfies(image -> assertThat(image.version()).isEqualTo("1"));
        assertThat(store.createRoot(SandboxId.random(), TEMPLATE, DISK).resolve("etc/version")).hasContent("1");

        assertFails(() -> store.installTemplate(TestRecipe.failing("fresh", "1"), owner(), TemplateRecipe.Progress.NONE),
                ErrorCode.RUNTIME_FAILED);
        assertThat(store.template("fresh")).isEmpty();
        assertFails(() -> store.createRoot(SandboxId.random(), "fresh", DISK), ErrorCode.TEMPLATE_NOT_FOUND);
    }

    @Test
    void aSandboxsRootBecomesATemplateWithItsFilesOwnersAndRecordedSettings() throws Exception {
        var builder = SandboxId.random();
        Path root = store.createRoot(builder, TEMPLATE, DISK);
        Files.writeString(root.resolve("etc/built"), "by a step");
        Files.delete(root.resolve("bin/blob"));
        var config = new TemplateConfig(Optional.of("ten_a"), Optional.of(TEMPLATE), Map.of("K", "v"), Optional.of("/srv"),
                Optional.of("root"), Optional.of(List.of("sh", "-c", "serve")), Optional.empty(),
                Optional.of(new TemplateConfig.Preboot("serve", "ready", "ckp_x", "sbx_y")));
        Instant builtAt = Instant.parse("2026-12-04T10:00:00Z");
        var image = store.installTemplateFromRoot(builder, new TemplateImage("built", "1", builtAt, 0, config));

        assertThat(image.sizeBytes()).isPositive().isLessThan(TestRecipe.BLOB_BYTES);
        assertThat(store.template("built")).contains(image);
        assertThat(image.config()).isEqualTo(config);
        Files.writeString(root.resolve("etc/built"), "changed after the install");
        Path child = store.createRoot(SandboxId.random(), "built", DISK);
        assertThat(child.resolve("etc/built")).hasContent("by a step");
        assertThat(child.resolve("bin/blob")).doesNotExist();
        assertThat(child.resolve("etc/version")).hasContent("1");
        assertThat(Files.getAttribute(child.resolve("etc/built"), "unix:uid")).isEqualTo(Files.getAttribute(root.resolve("etc/built"), "unix:uid"));

        // A second install is a new version; the roots of the first keep their files.
        Files.writeString(root.resolve("etc/built"), "version 2");
        store.installTemplateFromRoot(builder, new TemplateImage("built", "2", builtAt, 0, config));
        assertThat(store.template("built").orElseThrow().version()).isEqualTo("2");
        assertThat(child.resolve("etc/built")).hasContent("by a step");
        assertThat(store.createRoot(SandboxId.random(), "built", DISK).resolve("etc/built")).hasContent("version 2");

        // A hidden name (a build's cached step) is a valid template name too.
        store.installTemplateFromRoot(builder, new TemplateImage("_0123abcd", "1", builtAt, 0, TemplateConfig.NONE));
        assertThat(store.template("_0123abcd")).isPresent();
    }

    @Test
    void aRecipesSettingsAreRecordedWithItsTemplate() {
        var config = new TemplateConfig(Optional.of("ten_a"), Optional.of("upload"), Map.of("PATH", "/bin"), Optional.of("/app"),
                Optional.of("app"), Optional.of(List.of("sh")), Optional.empty());
        var recipe = new TemplateRecipe() {
            @Override
            public String name() {
                return "image";
            }

            @Override
            public String version() {
                return "1";
            }

            @Override
            public String description() {
                return "an imported image";
            }

            @Override
            public void populate(Path dir, Progress progress) throws Exception {
                Files.writeString(Files.createDirectories(dir.resolve("app")).resolve("hello"), "hi");
            }

            @Override
            public boolean keepsOwners() {
                return true;
            }

            @Override
            public TemplateConfig config() {
                return config;
            }
        };
        var image = store.installTemplate(recipe, owner(), TemplateRecipe.Progress.NONE);
        assertThat(image.config()).isEqualTo(config);
        assertThat(store.template("image").orElseThrow().config()).isEqualTo(config);
        assertThat(store.createRoot(SandboxId.random(), "image", DISK).resolve("app/hello")).hasContent("hi");
    }

    @Test
    void aRootInstalledUnderABadNameOrOfNoSandboxLeavesNoTemplate() {
        var builder = SandboxId.random();
        store.createRoot(builder, TEMPLATE, DISK);
        for (String name : List.of("../escape", "Upper", "", "a/b"))
            assertFails(() -> store.installTemplateFromRoot(builder, new TemplateImage(name, "1", Instant.now(), 0)), ErrorCode.INVALID_REQUEST);
        assertFails(() -> store.installTemplateFromRoot(SandboxId.random(), new TemplateImage("orphan", "1", Instant.now(), 0)),
                ErrorCode.RUNTIME_FAILED);
        assertThat(store.templates()).extracting(TemplateImage::name).containsExactly(TEMPLATE);
    }

    @Test
    void aTemplateIsCopiedUnderAVersionedNameAndTheCopyOutlivesANewVersion() {
        var copy = store.copyTemplate(TEMPLATE, new TemplateImage(TEMPLATE + "@1", "1", Instant.now(), 0));
        assertThat(copy.sizeBytes()).isEqualTo(store.template(TEMPLATE).orElseThrow().sizeBytes());
        store.installTemplate(TestRecipe.of(TEMPLATE, "2"), owner(), TemplateRecipe.Progress.NONE);
        assertThat(store.createRoot(SandboxId.random(), TEMPLATE + "@1", DISK).resolve("etc/version")).hasContent("1");
        assertThat(store.createRoot(SandboxId.random(), TEMPLATE, DISK).resolve("etc/version")).hasContent("2");
        assertFails(() -> store.copyTemplate("nope", new TemplateImage("nope@1", "1", Instant.now(), 0)), ErrorCode.TEMPLATE_NOT_FOUND);
    }

    @Test
    void aDeletedTemplateIsGoneAndItsRootsStay() {
        Path root = store.createRoot(SandboxId.random(), TEMPLATE, DISK);
        assertThat(store.deleteTemplate(TEMPLATE)).isTrue();
        assertThat(store.deleteTemplate(TEMPLATE)).isFalse();
        assertThat(store.deleteTemplate("never")).isFalse();
        assertThat(store.templates()).isEmpty();
        assertFails(() -> store.createRoot(SandboxId.random(), TEMPLATE, DISK), ErrorCode.TEMPLATE_NOT_FOUND);
        assertThat(root.resolve("etc/version")).hasContent("1");
    }

    @Test
    void aTemplateNameMustBeValid() {
        for (String name : List.of("../escape", "Upper", "", "a/b"))
            assertFails(() -> store.installTemplate(TestRecipe.of(name, "1"), owner(), TemplateRecipe.Progress.NONE),
                    ErrorCode.INVALID_REQUEST);
        assertThat(store.templates()).extracting(t -> t.name()).containsExactly(TEMPLATE);
    }

    @Test
    void rootsCanBeCreatedWhileTheTemplateIsReplaced() throws Exception {
        var failures = new ConcurrentLinkedQueue<Throwable>();
        var created = new ConcurrentLinkedQueue<SandboxId>();
        var stop = new AtomicBoolean();
        var creators = new ArrayList<Thread>();
        for (int t = 0; t < 4; t++) {
            creators.add(Thread.ofVirtual().start(() -> {
                while (!stop.get()) {
                    var id = SandboxId.random();
                    try {
                        Path root = store.createRoot(id, TEMPLATE, DISK);
                        created.add(id);
                        assertThat(root.resolve("bin/blob")).as("a whole version, never half of one").exists();
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }
            }));
        }
        try {
            for (int version = 2; version <= 5; version++)
                store.installTemplate(TestRecipe.of(TEMPLATE, Integer.toString(version)), owner(), TemplateRecipe.Progress.NONE);
        } finally {
            stop.set(true);
            for (var thread : creators) thread.join();
        }
        assertThat(failures).isEmpty();
        assertThat(created).isNotEmpty();
        assertThat(store.template(TEMPLATE).orElseThrow().version()).isEqualTo("5");
        for (var id : created) store.deleteRoot(id);
        assertThat(store.listRoots()).isEmpty();
    }

    // --- checkpoint snapshots and branches ---

    @Test
    void aSnapshotHoldsTheRootAsItWasWhenTaken() throws Exception {
        var source = SandboxId.random();
        Path root = store.createRoot(source, TEMPLATE, DISK);
        Files.writeString(root.resolve("etc/state"), "before");
        var checkpoint = CheckpointId.random();
        assertThat(store.hasSnapshot(checkpoint)).isFalse();

        store.flush(source);
        store.snapshotRoot(source, checkpoint);
        assertThat(store.hasSnapshot(checkpoint)).isTrue();
        assertThat(store.listSnapshots()).containsExactly(checkpoint);
        var atSnapshot = TreeContents.of(root);
        Files.writeString(root.resolve("etc/state"), "after");
        Files.delete(root.resolve("etc/hostname"));

        var branch = SandboxId.random();
        Path branchRoot = store.createRootFrom(branch, checkpoint, DISK);
        assertThat(store.root(branch)).contains(branchRoot);
        assertThat(branchRoot.resolve("etc/state")).hasContent("before");
        assertThat(TreeContents.of(branchRoot)).isEqualTo(atSnapshot);
        assertThat(store.listRoots()).containsExactlyInAnyOrder(source, branch);
    }

    @Test
    void aBranchAndItsSourceDoNotSeeEachOthersWrites() throws Exception {
        var source = SandboxId.random();
        Path root = store.createRoot(source, TEMPLATE, DISK);
        Files.writeString(root.resolve("etc/state"), "before");
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(source, checkpoint);

        Path branchRoot = store.createRootFrom(SandboxId.random(), checkpoint, DISK);
        Files.writeString(branchRoot.resolve("etc/state"), "branch");
        Files.writeString(branchRoot.resolve("branch-only"), "x");
        Files.writeString(root.resolve("etc/state"), "source");
        Files.writeString(root.resolve("source-only"), "y");

        assertThat(root.resolve("etc/state")).hasContent("source");
        assertThat(root.resolve("branch-only")).doesNotExist();
        assertThat(branchRoot.resolve("etc/state")).hasContent("branch");
        assertThat(branchRoot.resolve("source-only")).doesNotExist();
        Path secondBranch = store.createRootFrom(SandboxId.random(), checkpoint, DISK);
        assertThat(secondBranch.resolve("etc/state")).as("the snapshot saw neither").hasContent("before");
        assertThat(secondBranch.resolve("branch-only")).doesNotExist();
        assertThat(secondBranch.resolve("source-only")).doesNotExist();
    }

    @Test
    void snapshotsOutliveTheirRootAndBranchesOutliveTheirSnapshot() throws Exception {
        var source = SandboxId.random();
        Files.writeString(store.createRoot(source, TEMPLATE, DISK).resolve("etc/state"), "saved");
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(source, checkpoint);
        var branch = SandboxId.random();
        Path branchRoot = store.createRootFrom(branch, checkpoint, DISK);

        store.deleteRoot(source);
        assertThat(store.hasSnapshot(checkpoint)).isTrue();
        var later = SandboxId.random();
        assertThat(store.createRootFrom(later, checkpoint, DISK).resolve("etc/state")).hasContent("saved");

        store.deleteSnapshot(checkpoint);
        store.deleteSnapshot(checkpoint); // idempotent
        store.deleteSnapshot(CheckpointId.random()); // never existed
        assertThat(store.hasSnapshot(checkpoint)).isFalse();
        assertThat(store.listSnapshots()).isEmpty();
        assertThat(branchRoot.resolve("etc/state")).hasContent("saved");
        assertThat(branchRoot.resolve("etc/version")).hasContent("1");
        Files.writeString(branchRoot.resolve("etc/more"), "still writable");
        assertThat(store.listRoots()).containsExactlyInAnyOrder(branch, later);
    }

    @Test
    void snapshotAndBranchFailuresNameTheCheckpointAndLeaveNothing() throws Exception {
        var missing = CheckpointId.random();
        var id = SandboxId.random();
        assertFails(() -> store.createRootFrom(id, missing, DISK), ErrorCode.RUNTIME_FAILED, e -> assertThat(e.details())
                .containsEntry("sandbox", id.value()).containsEntry("checkpoint", missing.value()));
        assertThat(store.root(id)).isEmpty();
        assertFails(() -> store.snapshotRoot(id, missing), ErrorCode.RUNTIME_FAILED, e -> assertThat(e.details())
                .containsEntry("sandbox", id.value()).containsEntry("checkpoint", missing.value()));
        assertThat(store.hasSnapshot(missing)).isFalse();

        Path root = store.createRoot(id, TEMPLATE, DISK);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(id, checkpoint);
        assertFails(() -> store.snapshotRoot(id, checkpoint), ErrorCode.RUNTIME_FAILED);
        Files.writeString(root.resolve("mine"), "kept");
        assertFails(() -> store.createRootFrom(id, checkpoint, DISK), ErrorCode.RUNTIME_FAILED);
        assertThat(root.resolve("mine")).hasContent("kept");
        assertThat(store.listRoots()).containsExactly(id);
        assertThat(store.listSnapshots()).containsExactly(checkpoint);
    }

    // --- replaced roots ---

    @Test
    void replaceRootBranchesACheckpointAtTheSamePathAndPutsTheOldOneAside() throws Exception {
        var source = SandboxId.random();
        Files.writeString(store.createRoot(source, TEMPLATE, DISK).resolve("etc/marker"), "from the checkpoint");
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(source, checkpoint);
        var id = SandboxId.random();
        Path root = store.createRoot(id, TEMPLATE, DISK);
        Files.writeString(root.resolve("etc/old"), "in the old root");

        // What holds the old root (a sandbox's mount, here an open directory) keeps it as it was.
        try (var held = Files.newDirectoryStream(root.resolve("etc"))) {
            assertThat(store.replaceRoot(id, checkpoint, DISK)).isEqualTo(root);
            assertThat(store.root(id)).contains(root);
            assertThat(root.resolve("etc/marker")).hasContent("from the checkpoint");
            assertThat(root.resolve("etc/old")).doesNotExist();
            assertThat(held.iterator()).toIterable().extracting(p -> p.getFileName().toString()).contains("old").doesNotContain("marker");
        }
        assertThat(store.listRoots()).containsExactlyInAnyOrder(source, id);

        assertFails(() -> store.replaceRoot(id, checkpoint, DISK), ErrorCode.RUNTIME_FAILED); // an old root is already aside
        assertThat(root.resolve("etc/marker")).as("a refused replace changes nothing").hasContent("from the checkpoint");
        store.deleteReplacedRoot(id);
        store.deleteReplacedRoot(id); // idempotent
        assertThat(store.listRoots()).containsExactlyInAnyOrder(source, id);

        assertFails(() -> store.replaceRoot(id, CheckpointId.random(), DISK), ErrorCode.RUNTIME_FAILED);
        assertThat(root.resolve("etc/marker")).as("a failed replace puts the old root back").hasContent("from the checkpoint");
        var rootless = SandboxId.random();
        assertFails(() -> store.replaceRoot(rootless, checkpoint, DISK), ErrorCode.RUNTIME_FAILED);
        assertThat(store.root(rootless)).isEmpty();

        // A crash between the replace and the deletion of the old root: deleting the sandbox's root takes both.
        store.replaceRoot(id, checkpoint, DISK);
        store.deleteRoot(id);
        assertThat(store.root(id)).isEmpty();
        assertThat(store.listRoots()).containsExactly(source);
    }

    // --- streams ---

    @Test
    void aSentSnapshotReceivedAgainHoldsTheSameFiles() throws Exception {
        var id = SandboxId.random();
        Path root = store.createRoot(id, TEMPLATE, DISK);
        Files.write(root.resolve("data"), TestFiles.randomBytes(1 << 20, 1));
        Files.createDirectories(root.resolve("home/u/empty"));
        Files.createSymbolicLink(root.resolve("home/u/link"), Path.of("../../etc/version"));
        Files.setAttribute(root.resolve("home/u"), "unix:mode", 0700);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(id, checkpoint);
        var expected = TreeContents.of(root);

        byte[] stream = store.sendSnapshot(checkpoint, Optional.empty(), in -> in.readAllBytes());
        assertThat(store.hasSnapshot(checkpoint)).as("sending leaves the snapshot").isTrue();
        assertThat(stream.length).isGreaterThan(1 << 20);
        store.deleteSnapshot(checkpoint);

        store.receiveSnapshot(checkpoint, new ByteArrayInputStream(stream));
        assertThat(store.hasSnapshot(checkpoint)).isTrue();
        assertThat(store.listSnapshots()).containsExactly(checkpoint);
        assertThat(TreeContents.of(store.createRootFrom(SandboxId.random(), checkpoint, DISK))).isEqualTo(expected);
    }

    @Test
    void aChainReceivedElsewhereHoldsTheSameFiles() throws Exception {
        var sandbox = SandboxId.random();
        Path root = store.createRoot(sandbox, TEMPLATE, DISK);
        byte[] big = TestFiles.randomBytes(1 << 20, 2);
        Files.write(root.resolve("big"), big);
        Files.writeString(root.resolve("state"), "one");
        Files.writeString(root.resolve("gone"), "deleted before the second snapshot");
        var first = CheckpointId.random();
        store.snapshotRoot(sandbox, first);
        Files.writeString(root.resolve("state"), "two");
        Files.delete(root.resolve("gone"));
        Files.createDirectory(root.resolve("added"));
        var second = CheckpointId.random();
        store.snapshotRoot(sandbox, second);
        var atSecond = TreeContents.of(root);

        byte[] full = store.sendSnapshot(first, Optional.empty(), in -> in.readAllBytes());
        int incrementalLength = store.sendSnapshot(second, Optional.of(first), in -> in.readAllBytes().length);
        byte[] incremental = store.sendSnapshot(second, Optional.of(first), in -> in.readAllBytes());
        assertThat(incremental).hasSize(incrementalLength); // what the reader returns is what the call returns
        assertThat(full.length).isGreaterThan(big.length);
        assertThat(incremental.length).as("only what changed").isLessThan(big.length / 4);

        var there = newStore();
        there.receiveSnapshot(first, new ByteArrayInputStream(full));
        there.receiveSnapshot(second, new ByteArrayInputStream(incremental));
        assertThat(there.listSnapshots()).containsExactlyInAnyOrder(first, second);
        Path restored = there.createRootFrom(SandboxId.random(), second, DISK);
        assertThat(restored.resolve("state")).hasContent("two");
        assertThat(restored.resolve("gone")).doesNotExist();
        assertThat(TreeContents.of(restored)).isEqualTo(atSecond);
        assertThat(there.createRootFrom(SandboxId.random(), first, DISK).resolve("state")).hasContent("one");
    }

    @Test
    void aBrokenStreamLeavesNoSnapshot() throws Exception {
        var sandbox = SandboxId.random();
        Files.write(store.createRoot(sandbox, TEMPLATE, DISK).resolve("data"), TestFiles.randomBytes(1 << 20, 3));
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(sandbox, checkpoint);
        byte[] full = store.sendSnapshot(checkpoint, Optional.empty(), in -> in.readAllBytes());
        var next = CheckpointId.random();
        store.snapshotRoot(sandbox, next);
        byte[] incremental = store.sendSnapshot(next, Optional.of(checkpoint), in -> in.readAllBytes());

        var there = newStore();
        byte[] cut = Arrays.copyOf(full, full.length / 2);
        assertFails(() -> there.receiveSnapshot(checkpoint, new ByteArrayInputStream(cut)), ErrorCode.RUNTIME_FAILED,
                e -> assertThat(e.getMessage()).contains("receive root snapshot"));
        assertThat(there.hasSnapshot(checkpoint)).isFalse();
        assertFails(() -> there.receiveSnapshot(next, new ByteArrayInputStream(incremental)), ErrorCode.RUNTIME_FAILED); // no parent here
        assertThat(there.hasSnapshot(next)).isFalse();
        assertThat(there.listSnapshots()).isEmpty();

        there.receiveSnapshot(checkpoint, new ByteArrayInputStream(full));
        assertFails(() -> there.receiveSnapshot(checkpoint, new ByteArrayInputStream(full)), ErrorCode.RUNTIME_FAILED); // already there
        assertThat(there.listSnapshots()).containsExactly(checkpoint);
        there.receiveSnapshot(next, new ByteArrayInputStream(incremental)); // now its parent is there
        assertThat(there.listSnapshots()).containsExactlyInAnyOrder(checkpoint, next);
    }

    @Test
    void aStreamOfAnotherCheckpointIsRefusedAndLeavesNothing() throws Exception {
        var sandbox = SandboxId.random();
        Files.writeString(store.createRoot(sandbox, TEMPLATE, DISK).resolve("state"), "sent");
        var sent = CheckpointId.random();
        store.snapshotRoot(sandbox, sent);
        byte[] stream = store.sendSnapshot(sent, Optional.empty(), in -> in.readAllBytes());

        var there = newStore();
        var other = CheckpointId.random();
        assertFails(() -> there.receiveSnapshot(other, new ByteArrayInputStream(stream)), ErrorCode.RUNTIME_FAILED,
                e -> assertThat(e.details()).containsEntry("checkpoint", other.value()));
        assertThat(there.hasSnapshot(other)).isFalse();
        assertThat(there.hasSnapshot(sent)).as("nothing received under the name the stream gave").isFalse();
        assertThat(there.listSnapshots()).isEmpty();

        there.receiveSnapshot(sent, new ByteArrayInputStream(stream)); // under its own name it is received
        assertThat(there.listSnapshots()).containsExactly(sent);
        assertThat(there.createRootFrom(SandboxId.random(), sent, DISK).resolve("state")).hasContent("sent");
    }

    @Test
    void sendingAMissingSnapshotOrFromAMissingParentFails() {
        var sandbox = SandboxId.random();
        store.createRoot(sandbox, TEMPLATE, DISK);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(sandbox, checkpoint);
        var missing = CheckpointId.random();
        assertFails(() -> store.sendSnapshot(missing, Optional.empty(), in -> in.readAllBytes()), ErrorCode.RUNTIME_FAILED,
                e -> assertThat(e.details()).containsEntry("checkpoint", missing.value()));
        assertFails(() -> store.sendSnapshot(checkpoint, Optional.of(missing), in -> in.readAllBytes()), ErrorCode.RUNTIME_FAILED);
        assertThat(store.listSnapshots()).containsExactly(checkpoint);
    }

    // --- many callers ---

    @Test
    void sandboxesComeAndGoInParallel() throws Exception {
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            var results = new ArrayList<Future<?>>();
            for (int t = 0; t < 8; t++) {
                int worker = t;
                results.add(threads.submit(() -> {
                    for (int round = 0; round < 3; round++) {
                        var id = SandboxId.random();
                        Path root = store.createRoot(id, TEMPLATE, DISK);
                        Files.writeString(root.resolve("who"), worker + "/" + round);
                        var checkpoint = CheckpointId.random();
                        store.snapshotRoot(id, checkpoint);
                        var branch = SandboxId.random();
                        assertThat(store.createRootFrom(branch, checkpoint, DISK).resolve("who")).hasContent(worker + "/" + round);
                        store.deleteSnapshot(checkpoint);
                        store.deleteRoot(branch);
                        store.deleteRoot(id);
                    }
                    return null;
                }));
            }
            for (var result : results) result.get();
        }
        assertThat(store.listRoots()).isEmpty();
        assertThat(store.listSnapshots()).isEmpty();
    }

    // --- helpers ---

    private static void assertFails(ThrowingCallable call, ErrorCode code) {
        assertFails(call, code, e -> { });
    }

    private static void assertFails(ThrowingCallable call, ErrorCode code, Consumer<StasisException> more) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(code);
            more.accept(e);
        });
    }
}
