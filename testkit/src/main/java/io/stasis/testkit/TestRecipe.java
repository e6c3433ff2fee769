package io.stasis.testkit;

import io.stasis.core.spi.TemplateRecipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A small recipe for tests: a few files of each kind (a read-only file, a setuid one, an absolute
 * symlink to a host file), optionally failing half-way. Writes no device nodes, so a store needs
 * no privilege to build it.
 */
public record TestRecipe(String name, String version, boolean failAfterWriting) implements TemplateRecipe {
    /** The size of {@code bin/blob}: a template of this recipe holds at least this many bytes. */
    public static final int BLOB_BYTES = 100_000;

    public static TestRecipe of(String name, String version) {
        return new TestRecipe(name, version, false);
    }

    public static TestRecipe failing(String name, String version) {
        return new TestRecipe(name, version, true);
    }

    @Override
    public String description() {
        return "test files";
    }

    @Override
    public void populate(Path dir, Progress progress) throws Exception {
        progress.report(0.1, "writing files");
        Files.createDirectories(dir.resolve("etc"));
        Files.createDirectories(dir.resolve("bin"));
        Files.writeString(dir.resolve("etc/version"), version);
        Files.writeString(dir.resolve("etc/hostname"), "template\n");
        Files.write(dir.resolve("bin/blob"), new byte[BLOB_BYTES]);
        // An absolute symlink to a host file: lchown must change the link, never /etc/passwd.
        Files.createSymbolicLink(dir.resolve("etc/host-passwd"), Path.of("/etc/passwd"));
        Path setuid = dir.resolve("bin/su");
        Files.writeString(setuid, "#!/bin/sh\n");
        Files.setAttribute(setuid, "unix:mode", 04755);
        Files.setPosixFilePermissions(dir.resolve("etc/hostname"), PosixFilePermissions.fromString("r--r--r--"));
        if (failAfterWriting) throw new IllegalStateException("recipe " + name + " " + version + " broke on purpose");
        progress.report(1, "done");
    }
}
