package io.stasis.fs.linux;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileContent;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.SandboxFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SandboxFiles} on Linux: each call opens the sandbox root once ({@link ConfinedRoot}) and
 * lets the kernel resolve the caller's path confined to it. Errors name the path as the sandbox
 * sees it, never a host path.
 */
public final class LinuxSandboxFiles implements SandboxFiles {
    private static final Logger log = LoggerFactory.getLogger(LinuxSandboxFiles.class);

    private final FileOwner owner;

    /** @param owner the host uid/gid that root inside the sandboxes maps to (normally 100000:100000) */
    public LinuxSandboxFiles(FileOwner owner) {
        this.owner = Objects.requireNonNull(owner, "owner");
    }

    @Override
    public FileContent read(Path root, SandboxPath path) {
        try (ConfinedRoot confined = openRoot(root)) {
            var file = confined.openForReading(path.value());
            return new FileContent(file.stat().size(), file.stream());
        } catch (LinuxException e) {
            throw FileErrors.map(e, path.normalized());
        } catch (IOException e) {
            throw new StasisException(ErrorCode.INTERNAL, "could not open " + path.normalized() + " for reading",
                    Map.of("path", path.normalized()), e);
        }
    }

    @Override
    public FileInfo write(Path root, SandboxPath path, InputStream content, OptionalInt mode, long maxBytes) {
        mode.ifPresent(LinuxSandboxFiles::checkMode);
        String shown = path.normalized();
        long started = System.nanoTime();
        try (ConfinedRoot confined = openRoot(root)) {
            Stat stat = confined.writeFile(path.value(), SizeLimitedInputStream.forPath(content, maxBytes, shown), mode, true);
            log.atDebug().addKeyValue("path", shown).addKeyValue("bytes", stat.size())
                    .addKeyValue("ms", (System.nanoTime() - started) / 1_000_000).log("file written");
            return info(shown, new ConfinedRoot.Entry(nameOf(shown), stat, Optional.empty()));
        } catch (LinuxException e) {
            throw FileErrors.map(e, shown);
        } catch (IOException e) {
            // the upload itself broke off; the old file is untouched and the partial one gone
            throw new StasisException(ErrorCode.MALFORMED_REQUEST,
                    "the content for " + shown + " could not be read to the end: " + e.getMessage(),
                    Map.of("path", shown), e);
        }
    }

    @Override
    public List<FileInfo> list(Path root, SandboxPath path) {
        String shown = path.normalized();
        try (ConfinedRoot confined = openRoot(root)) {
            String base = shown.equals("/") ? "" : shown;
            return confined.list(path.value()).stream().map(e -> info(base + "/" + e.name(), e)).toList();
        } catch (LinuxException e) {
            throw FileErrors.map(e, shown);
        }
    }

    @Override
    public FileInfo stat(Path root, SandboxPath path) {
        String shown = path.normalized();
        try (ConfinedRoot confined = openRoot(root)) {
            return info(shown, confined.describe(path.value()));
        } catch (LinuxException e) {
            throw FileErrors.map(e, shown);
        }
    }

    @Override
    public FileInfo mkdir(Path root, SandboxPath path, OptionalInt mode) {
        mode.ifPresent(LinuxSandboxFiles::checkMode);
        String shown = path.normalized();
        try (ConfinedRoot confined = openRoot(root)) {
            Stat stat = confined.mkdirs(path.value(), mode.orElse(FileCreation.DEFAULT_DIR_MODE));
            return info(shown, new ConfinedRoot.Entry(nameOf(shown), stat, Optional.empty()));
        } catch (LinuxException e) {
            if (e.is(Errno.ENOTDIR)) // a file where a directory of the path should be: that is what file_exists means here
                e = new LinuxException(Errno.EEXIST, e.syscall(), e.path(), "a file that is not a directory is in the way");
            throw FileErrors.map(e, shown);
        }
    }

    @Override
    public FileInfo move(Path root, SandboxPath from, SandboxPath to, boolean overwrite) {
        String shownFrom = from.normalized();
        String shownTo = to.normalized();
        try (ConfinedRoot confined = openRoot(root)) {
            var moved = confined.move(from.value(), to.value(), overwrite);
            log.atDebug().addKeyValue("from", shownFrom).addKeyValue("to", shownTo).log("file moved");
            return info(shownTo, moved);
        } catch (LinuxException e) {
            // EEXIST concerns the destination; the rest could be either side, so name both
            throw FileErrors.map(e, e.is(Errno.EEXIST) ? shownTo : shownFrom + " -> " + shownTo);
        }
    }

    @Override
    public void delete(Path root, SandboxPath path, boolean recursive) {
        String shown = path.normalized();
        try (ConfinedRoot confined = openRoot(root)) {
            confined.delete(path.value(), recursive);
            log.atDebug().addKeyValue("path", shown).addKeyValue("recursive", recursive).log("file deleted");
        } catch (LinuxException e) {
            throw FileErrors.map(e, shown);
        }
    }

    @Override
    public FileOwner owner() {
        return owner;
    }

    /** Opening the root is the one step that sees a host path: it is logged, never put in the error. */
    private ConfinedRoot openRoot(Path root) {
        try {
            return ConfinedRoot.open(root, owner);
        } catch (LinuxException e) {
            log.atWarn().addKeyValue("root", root).addKeyValue("errno", e.errnoName()).log("sandbox root cannot be opened");
            throw new StasisException(ErrorCode.INTERNAL,
                    "the sandbox's root filesystem cannot be opened (" + e.errnoName() + ")", Map.of("errno", e.errnoName()));
        }
    }

    private static FileInfo info(String shownPath, ConfinedRoot.Entry entry) {
        Stat st = entry.stat();
        FileType type = st.isRegularFile() ? FileType.FILE
                : st.isDirectory() ? FileType.DIRECTORY
                : st.isSymlink() ? FileType.SYMLINK
                : FileType.OTHER;
        return new FileInfo(shownPath, nameOf(shownPath), type, st.size(), st.permissions(), st.mtime(), entry.linkTarget());
    }

    private static String nameOf(String shownPath) {
        return shownPath.equals("/") ? "/" : shownPath.substring(shownPath.lastIndexOf('/') + 1);
    }

    private static void checkMode(int mode) {
        if (mode < 0 || mode > 07777)
            throw StasisException.invalid("mode", "must be an octal permission mode within 0000..7777, not " + Integer.toOctalString(mode));
    }
}
