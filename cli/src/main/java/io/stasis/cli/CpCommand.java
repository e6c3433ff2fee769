package io.stasis.cli;

import io.stasis.sdk.FileInfo;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.SandboxFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code stasis cp SRC DST}: copies between this machine and a sandbox, like cp(1): into DST when
 * it is an existing directory, else as DST. Permission bits go along; symlinks are skipped with
 * a warning (the API cannot create them, and following them could leave the tree).
 */
@Command(name = "cp", mixinStandardHelpOptions = true,
        description = {"Copy files between this machine and a sandbox.",
                "Exactly one of SRC and DST is ID:/path. Copies into DST when it is an existing directory.",
                "A local path with a colon in it needs a slash before the colon (./a:b)."})
final class CpCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Spec
    CommandSpec spec;

    @Option(names = {"-r", "--recursive"}, description = "Copy directories recursively.")
    boolean recursive;

    @Parameters(index = "0", paramLabel = "SRC", description = "A local path, or ID:/path in a sandbox.")
    String source;

    @Parameters(index = "1", paramLabel = "DST", description = "A local path, or ID:/path in a sandbox.")
    String destination;

    /** What was copied, printed with --json. */
    record Summary(int files, int directories, long bytes, List<String> skipped) {
    }

    private int files;
    private int directories;
    private long bytes;
    private final List<String> skipped = new ArrayList<>();
    private Progress progress;

    @Override
    public Integer call() {
        root.io().requireLocal("cp reads and writes this process's files");
        CpLocation from = CpLocation.parse(source);
        CpLocation to = CpLocation.parse(destination);
        try (var p = Progress.start(root)) {
            progress = p;
            switch (from) {
                case CpLocation.Local local when to instanceof CpLocation.Remote remote -> upload(local.path(), remote);
                case CpLocation.Remote remote when to instanceof CpLocation.Local local -> download(remote, local.path());
                default -> throw new ParameterException(spec.commandLine(),
                        "exactly one of SRC and DST must be in a sandbox (ID:/path), got '" + source + "' and '"
                                + destination + "'");
            }
        }
        if (root.json()) root.printJson(new Summary(files, directories, bytes, skipped));
        return ExitCodes.OK;
    }

    // ---- upload

    private void upload(Path local, CpLocation.Remote remote) {
        if (!Files.exists(local, LinkOption.NOFOLLOW_LINKS)) throw new CommandFailure(local + ": no such file or directory");
        SandboxFiles sandboxFiles = root.client().sandboxes().files(remote.sandbox());
        String target = isRemoteDirectory(sandboxFiles, remote) ? remote.child(fileName(local)) : remote.path();
        if (Files.isDirectory(local)) {
            if (!recursive) throw new CommandFailure(local + " is a directory (use -r)");
            uploadTree(sandboxFiles, local, target);
        } else if (Files.isRegularFile(local)) {
            uploadFile(sandboxFiles, local, target);
        } else {
            throw new CommandFailure(local + " is not a regular file or directory");
        }
    }

    private static boolean isRemoteDirectory(SandboxFiles sandboxFiles, CpLocation.Remote remote) {
        try {
            return sandboxFiles.stat(remote.path()).isDirectory();
        } catch (NotFoundException e) {
            if (!"file_not_found".equals(e.code())) throw e;
            if (remote.path().endsWith("/")) return true; // "dir/" names a directory to be created
            return false;
        }
    }

    private void uploadFile(SandboxFiles sandboxFiles, Path local, String target) {
        showCopying(local.toString());
        FileInfo written = sandboxFiles.write(target, local, mode(local));
        files++;
        bytes += written.size();
    }

    private void uploadTree(SandboxFiles sandboxFiles, Path top, String target) {
        try {
            Files.walkFileTree(top, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    sandboxFiles.mkdir(remoteFor(dir), mode(dir));
                    directories++;
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()) {
                        uploadFile(sandboxFiles, file, remoteFor(file));
                    } else {
                        skip(file.toString(), attrs.isSymbolicLink() ? "a symlink" : "not a regular file");
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    throw e;
                }

                private String remoteFor(Path path) {
                    String relative = top.relativize(path).toString();
                    return relative.isEmpty() ? target : (target.endsWith("/") ? target : target + "/") + relative;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + e.getMessage(), e);
        }
    }

    /** The local permission bits as octal, or null where the file system has none. */
    private static String mode(Path local) {
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(local);
            int bits = 0;
            for (PosixFilePermission p : permissions) bits |= 1 << (8 - p.ordinal());
            return String.format("%04o", bits);
        } catch (UnsupportedOperationException | IOException e) {
            return null;
        }
    }

    // ---- download

    private void download(CpLocation.Remote remote, Path local) {
        SandboxFiles sandboxFiles = root.client().sandboxes().files(remote.sandbox());
        FileInfo info = sandboxFiles.stat(remote.path());
        Path target = local;
        if (Files.isDirectory(local) && !remote.baseName().isEmpty()) target = local.resolve(remote.baseName());
        if (info.isDirectory()) {
            if (!recursive) throw new CommandFailure(remote.sandbox() + ":" + remote.path() + " is a directory (use -r)");
            downloadTree(sandboxFiles, info, target);
        } else if (info.isFile() || info.isSymlink()) {
            // A symlink named on the command line is followed (inside the sandbox), like cp does.
            downloadFile(sandboxFiles, info.isSymlink() ? remote.path() : info.path(), info, target);
        } else {
            throw new CommandFailure(remote.sandbox() + ":" + remote.path() + " is not a regular file or directory");
        }
    }

    private void downloadFile(SandboxFiles sandboxFiles, String path, FileInfo info, Path target) {
        if (Files.isDirectory(target)) throw new CommandFailure(target + " is a directory");
        showCopying(path);
        bytes += sandboxFiles.download(path, target);
        files++;
        if (info.isFile()) applyMode(target, info.mode());
    }

    private void downloadTree(SandboxFiles sandboxFiles, FileInfo dir, Path target) {
        try {
            Files.createDirectories(target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + target + ": " + e.getMessage(), e);
        }
        directories++;
        for (FileInfo entry : sandboxFiles.list(dir.path())) {
            Path child = target.resolve(safeName(entry));
            switch (entry.type()) {
                case DIR -> downloadTree(sandboxFiles, entry, child);
                case FILE -> downloadFile(sandboxFiles, entry.path(), entry, child);
                case SYMLINK -> skip(entry.path(), "a symlink");
                case OTHER -> skip(entry.path(), "not a regular file");
            }
        }
        applyMode(target, dir.mode());
    }

    /** A listing entry's name as one local path element; a name that is not one is refused. */
    private static String safeName(FileInfo entry) {
        String name = entry.name();
        if (name == null || name.isEmpty() || name.equals(".") || name.equals("..") || name.contains("/")
                || name.indexOf('\0') >= 0) {
            throw new CommandFailure("refusing the sandbox entry name '" + name + "' in " + entry.path());
        }
        return name;
    }

    private static void applyMode(Path target, String mode) {
        if (mode == null || !mode.matches("[0-7]{3,4}")) return;
        int bits = Integer.parseInt(mode, 8) & 0777;
        var text = new StringBuilder();
        String letters = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) text.append((bits & (1 << (8 - i))) != 0 ? letters.charAt(i) : '-');
        try {
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString(text.toString()));
        } catch (UnsupportedOperationException | IOException e) {
            // Best effort, like cp without -p on a file system without modes.
        }
    }

    /** On a terminal: the file being copied, and how far the copy has come. */
    private void showCopying(String path) {
        progress.show("copying " + path + " (" + files + (files == 1 ? " file, " : " files, ") + HumanFormat.size(bytes)
                + " so far)");
    }

    private void skip(String path, String why) {
        skipped.add(path);
        progress.erase();
        if (!root.json()) root.io().err().println("warning: skipped " + path + ": " + why);
    }

    private static String fileName(Path local) {
        Path name = local.toAbsolutePath().normalize().getFileName();
        return name == null ? "" : name.toString();
    }
}
