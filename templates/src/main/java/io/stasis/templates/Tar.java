package io.stasis.templates;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs GNU {@code tar}: whole root filesystems in and out, as root, keeping
 * numeric owners, permissions, symlinks, hard links, device nodes and extended attributes (file
 * capabilities live there). Compresses with zstd when the host has it; extraction detects the
 * compression by itself.
 */
final class Tar {
    private static final Logger log = LoggerFactory.getLogger(Tar.class);
    private static final List<String> KEEP_EVERYTHING = List.of("--numeric-owner", "--xattrs", "--xattrs-include=*");

    private final Path binary;
    private final boolean zstd;
    private final Duration timeout;

    Tar(Path binary, boolean zstd, Duration timeout) {
        this.binary = binary;
        this.zstd = zstd;
        this.timeout = timeout;
    }

    static Tar fromSystem() {
        return new Tar(ToolRunner.locate("tar"), Files.isExecutable(ToolRunner.locate("zstd")), Duration.ofMinutes(10));
    }

    /** The file name ending for archives this instance writes. */
    String extension() {
        return zstd ? ".tar.zst" : ".tar";
    }

    /** Archives the contents of {@code dir} (not {@code dir} itself) into {@code archive}. */
    void create(Path dir, Path archive) {
        var argv = new ArrayList<String>(List.of(binary.toString(), "--create", "--file", archive.toString(), "--one-file-system"));
        if (zstd) argv.add("--zstd");
        argv.addAll(KEEP_EVERYTHING);
        argv.addAll(List.of("--directory", dir.toString(), "."));
        run("tar create", argv);
    }

    /** Unpacks {@code archive} into the existing directory {@code dir}. */
    void extract(Path archive, Path dir) {
        var argv = new ArrayList<String>(List.of(binary.toString(), "--extract", "--file", archive.toString(),
                "--same-permissions", "--same-owner"));
        argv.addAll(KEEP_EVERYTHING);
        argv.addAll(List.of("--directory", dir.toString()));
        run("tar extract", argv);
    }

    private void run(String step, List<String> argv) {
        try {
            var result = ToolRunner.run(argv, timeout);
            if (result.exitCode() != 0)
                throw Failures.tool(step, "exit " + result.exitCode() + ": " + result.stderrTail(),
                        Map.of("stderr", result.stderrTail(), "archive", argv.get(3)), null);
            log.atDebug().addKeyValue("step", step).addKeyValue("ms", result.millis()).log("tar ok");
        } catch (IOException e) {
            throw Failures.tool(step, "cannot start " + binary + ": " + e.getMessage(), Map.of(), e);
        } catch (ToolRunner.TimedOut e) {
            throw Failures.tool(step, e.getMessage(), Map.of(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.tool(step, "interrupted", Map.of(), e);
        }
    }
}
