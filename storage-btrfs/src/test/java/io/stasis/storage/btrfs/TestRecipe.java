package io.stasis.storage.btrfs;

import io.stasis.core.spi.TemplateRecipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** A small recipe for tests: a few files of each kind, optionally failing half-way. */
record TestRecipe(String name, String version, boolean failAfterWriting) implements TemplateRecipe {

    static TestRecipe of(String name, String version) {
        return new TestRecipe(name, version, false);
    }

    static TestRecipe failing(String name, String version) {
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
        Files.write(dir.resolve("bin/blob"), new byte[100_000]);
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
