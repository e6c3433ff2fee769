package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Sandboxes started from a CRIU image (through runc): a hibernated one again, or a fork. */
final class CriuRestores {
    private static final Logger log = LoggerFactory.getLogger(CriuRestores.class);

    private final Runc runc;
    private final ImageStore images;
    private final Bundles bundles;
    private final SandboxInit init;
    private final ServiceFiles serviceFiles;
    private final ContainerCleanup cleanup;
    private final VethPlug vethPlug;

    CriuRestores(Runc runc, ImageStore images, Bundles bundles, SandboxInit init, ServiceFiles serviceFiles, ContainerCleanup cleanup,
                 VethPlug vethPlug) {
        this.runc = runc;
        this.vethPlug = vethPlug;
        this.images = images;
        this.bundles = bundles;
        this.init = init;
        this.serviceFiles = serviceFiles;
        this.cleanup = cleanup;
    }

    void restore(RuntimeSpec spec, CheckpointId image) {
        SandboxId id = spec.id();
        if (!images.isComplete(image))
            throw StasisException.runtimeFailed(id.value(), "restore", "the image " + image + " is missing or incomplete", null);
        long start = System.nanoTime();
        Path bundle = bundles.writeForRestore(spec, vethPlug.restoreHook(spec.network()));
        Path work = images.workDir(image, "restore-" + id.value());
        try {
            Path pidFile = bundle.resolve("init.pid");
            Files.deleteIfExists(pidFile);
            long pid;
            try {
                runc.restoreDetached(id, bundle, withHostname(id, images.dir(image), work, spec.hostname()), work, pidFile);
                pid = SandboxInit.readPid(id, pidFile);
            } catch (StasisException e) {
                pid = restoredDespite(id, e);
            }
            init.awaitAnswer(id, spec.root(), pid, start);
            serviceFiles.writeInstance(spec, image);
        } catch (IOException e) {
            var failure = StasisException.runtimeFailed(id.value(), "restore", e.getMessage(), e);
            cleanup.destroyAfter(id, failure);
            throw failure;
        } catch (RuntimeException e) {
            var failure = CriuLog.withErrors(e, work.resolve("restore.log"));
            cleanup.destroyAfter(id, failure);
            throw failure;
        }
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("image", image)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("restored");
    }

    /**
     * The image to restore {@code hostname} from: the image itself when it names that hostname (a
     * sandbox's own hibernation), otherwise (a fork, a restore under a new id) a view of it in
     * {@code work}, links to its files but for the UTS namespace's, which names {@code hostname}.
     * Hard links: the restored tasks read some images after they have pivoted into the sandbox's
     * root, where a symbolic link's absolute path leads nowhere (a relative one still does, where
     * the work and image directories are on different filesystems).
     */
    private static Path withHostname(SandboxId id, Path image, Path work, String hostname) throws IOException {
        List<Path> files;
        try (var listing = Files.list(image)) {
            files = listing.toList();
        }
        var found = files.stream().filter(f -> f.getFileName().toString().matches("utsns-[0-9]+\\.img")).toList();
        if (found.size() != 1) return image; // none dumped: nothing to rename
        Path uts = found.getFirst();
        byte[] bytes = Files.readAllBytes(uts);
        try {
            if (UtsnsImage.hostname(bytes).equals(hostname)) return image;
        } catch (IllegalArgumentException e) {
            throw StasisException.runtimeFailed(id.value(), "restore", uts + ": " + e.getMessage(), e);
        }
        Path view = Files.createDirectories(work.resolve("images"));
        for (Path file : files) {
            if (file.equals(uts)) Files.write(view.resolve(file.getFileName()), UtsnsImage.withHostname(bytes, hostname));
            else link(view.resolve(file.getFileName()), file);
        }
        return view;
    }

    private static void link(Path link, Path file) throws IOException {
        try {
            Files.createLink(link, file);
        } catch (IOException | UnsupportedOperationException e) {
            Files.createSymbolicLink(link, link.getParent().relativize(file));
        }
    }

    /**
     * The init pid of a restore whose runc failed (killed) after CRIU had resumed the processes,
     * else rethrows {@code failure}. Once runc has saved the container's state at CRIU's
     * post-restore step, CRIU resumes the processes without it; they run and change the root, so
     * undoing would leave a root the image no longer matches (a file a process had open, renamed
     * meanwhile, and every later restore failed). What runc would have done at its end is done
     * here: unmount what it mounted for CRIU.
     */
    private long restoredDespite(SandboxId id, StasisException failure) {
        Optional<Runc.ContainerState> survivor;
        try {
            survivor = runc.state(id).filter(Runc.ContainerState::running).filter(s -> HostProcesses.isAlive(s.pid()));
        } catch (RuntimeException e) {
            failure.addSuppressed(e); // runc's state is half written: nothing to keep
            throw failure;
        }
        if (survivor.isEmpty()) throw failure;
        log.atWarn().addKeyValue("sandbox", id).addKeyValue("pid", survivor.get().pid()).addKeyValue("reason", failure.getMessage())
                .log("runc failed after CRIU had resumed the sandbox's processes; keeping them");
        runc.unmountLeftInState(id);
        cleanup.unmountLeftInRoot(id);
        return survivor.get().pid();
    }
}
