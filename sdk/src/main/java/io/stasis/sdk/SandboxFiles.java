package io.stasis.sdk;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The files of one sandbox, as the sandbox sees them ({@code /root/x.py}); relative paths are
 * taken from {@code /}. Works whether the sandbox runs or not. Contents are streamed both ways.
 *
 * <pre>{@code
 * SandboxFiles files = sandbox.files();
 * files.write("/root/app/main.py", "print('hi')\n");
 * files.write("/root/run.sh", Path.of("run.sh"), "0755");
 * byte[] data = files.read("/root/app/main.py");
 * for (FileInfo f : files.list("/root/app")) System.out.println(f.name() + " " + f.size());
 * files.download("/root/out.tar", Path.of("out.tar"));
 * files.delete("/root/app", true);
 * }</pre>
 */
public final class SandboxFiles {
    private static final Pattern MODE = Pattern.compile("[0-7]{3,4}");
    private static final String OCTETS = "application/octet-stream";

    private final SandboxCalls calls;
    private final HttpTransport transport;

    SandboxFiles(SandboxCalls calls) {
        this.calls = calls;
        this.transport = calls.transport();
    }

    /** The whole content of a file (symlinks followed inside the sandbox). */
    public byte[] read(String path) {
        var call = transport.call("GET", calls.path("/files")).query(Query.path(path)).accept(OCTETS);
        return transport.readAll(call, transport.send(call));
    }

    /** A file's content as a stream; the caller must close it. Errors are thrown before it returns. */
    public InputStream readStream(String path) {
        var call = transport.call("GET", calls.path("/files")).query(Query.path(path)).accept(OCTETS);
        return transport.send(call).body();
    }

    /**
     * Streams a file into {@code local}, replacing it only once the download is complete.
     *
     * @return the number of bytes written
     */
    public long download(String path, Path local) {
        Path target = local.toAbsolutePath();
        var call = transport.call("GET", calls.path("/files")).query(Query.path(path)).accept(OCTETS);
        HttpResponse<InputStream> response = transport.send(call);
        Path partial = null;
        try (InputStream in = response.body()) {
            partial = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".part");
            long total = copy(call, in, partial);
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            partial = null;
            return total;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        } finally {
            deleteQuietly(partial);
        }
    }

    private long copy(HttpTransport.Call call, InputStream in, Path file) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                int n;
                try {
                    n = in.read(buffer);
                } catch (IOException e) {
                    throw transport.brokenStream(call, e);
                }
                if (n < 0) return total;
                out.write(buffer, 0, n);
                total += n;
            }
        }
    }

    private static void deleteQuietly(Path file) {
        if (file == null) return;
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // Best effort: the download already failed with a better error.
        }
    }

    /** Writes a file (parents created), keeping an existing file's mode. */
    public FileInfo write(String path, byte[] content) {
        return write(path, content, null);
    }

    /** Writes a file with the given octal mode, e.g. {@code "0755"} (null keeps the existing mode). */
    public FileInfo write(String path, byte[] content, String mode) {
        return put(path, BodyPublishers.ofByteArray(content), mode, true);
    }

    /** Writes text as UTF-8. */
    public FileInfo write(String path, String content) {
        return write(path, content, null);
    }

    public FileInfo write(String path, String content, String mode) {
        return put(path, BodyPublishers.ofString(content, StandardCharsets.UTF_8), mode, true);
    }

    /** Streams the rest of {@code content} into the file; the stream is read but not closed. */
    public FileInfo write(String path, InputStream content) {
        return write(path, content, null);
    }

    public FileInfo write(String path, InputStream content, String mode) {
        Objects.requireNonNull(content, "content");
        // The stream can be read only once: the upload is never repeated.
        return put(path, BodyPublishers.ofInputStream(() -> content), mode, false);
    }

    /** Uploads a local file, streamed. */
    public FileInfo write(String path, Path local) {
        return write(path, local, null);
    }

    public FileInfo write(String path, Path local, String mode) {
        BodyPublisher body;
        try {
            body = BodyPublishers.ofFile(local);
        } catch (FileNotFoundException e) {
            throw new UncheckedIOException("cannot read " + local + ": no such file", e);
        }
        return put(path, body, mode, true);
    }

    private FileInfo put(String path, BodyPublisher body, String mode, boolean replayable) {
        var query = Query.path(path).add("mode", checkMode(mode));
        // No timeout: the response comes only after the whole upload, however long it takes.
        var call = HttpTransport.Call.of("PUT", calls.path("/files")).query(query).body(body, OCTETS);
        if (!replayable) call = call.once();
        return transport.json(call, FileInfo.class);
    }

    /** Every entry of a directory, sorted by name; follows the pages. */
    public List<FileInfo> list(String path) {
        var all = new ArrayList<FileInfo>();
        listPage(path, null, null).all().forEach(all::add);
        return all;
    }

    /** One page of a directory listing. {@code limit} and {@code cursor} may be null. */
    public Page<FileInfo> listPage(String path, Integer limit, String cursor) {
        var query = Query.path(path).add("limit", limit).add("cursor", cursor);
        Page.Body<FileInfo> body = transport.page(transport.call("GET", calls.path("/files/list")).query(query),
                FileInfo.class);
        return new Page<>(body.items(), body.nextCursor(), next -> listPage(path, limit, next));
    }

    /** The entry itself (a symlink is not followed). */
    public FileInfo stat(String path) {
        return transport.json(transport.call("GET", calls.path("/files/stat")).query(Query.path(path)),
                FileInfo.class);
    }

    /** Whether the path exists (a dangling symlink exists). */
    public boolean exists(String path) {
        try {
            stat(path);
            return true;
        } catch (NotFoundException e) {
            if ("file_not_found".equals(e.code())) return false;
            throw e;
        }
    }

    /** Creates a directory and its parents; succeeds if it already exists. */
    public FileInfo mkdir(String path) {
        return mkdir(path, null);
    }

    public FileInfo mkdir(String path, String mode) {
        var call = transport.call("POST", calls.path("/files/mkdir")).query(Query.path(path).add("mode", checkMode(mode)));
        return transport.json(call, FileInfo.class);
    }

    /** Moves without replacing: {@link ConflictException} ({@code file_exists}) if {@code to} exists. */
    public FileInfo move(String from, String to) {
        return move(from, to, false);
    }

    public FileInfo move(String from, String to, boolean overwrite) {
        var call = transport.jsonCall("POST", calls.path("/files/move"), new MoveBody(from, to, overwrite));
        return transport.json(call, FileInfo.class);
    }

    /** Deletes a file, symlink or empty directory. */
    public void delete(String path) {
        delete(path, false);
    }

    /** Deletes; a non-empty directory needs {@code recursive}. */
    public void delete(String path, boolean recursive) {
        var query = Query.path(path).add("recursive", recursive);
        transport.discard(transport.call("DELETE", calls.path("/files")).query(query));
    }

    /**
     * Watches {@code path} (a directory, or a single file) and hands each change to
     * {@code consumer} on a background thread until the watch is closed; see {@link FileWatch}.
     * Returns once the watch is installed.
     *
     * @param recursive also watch every directory below, including ones created later
     * @throws NotFoundException       {@code file_not_found}
     * @throws InvalidRequestException {@code invalid_request}
     */
    public FileWatch watch(String path, boolean recursive, Consumer<FileChange> consumer) {
        return FileWatch.open(calls, Objects.requireNonNull(path, "path"), recursive,
                Objects.requireNonNull(consumer, "consumer"));
    }

    private static String checkMode(String mode) {
        if (mode != null && !MODE.matcher(mode).matches()) {
            throw new IllegalArgumentException("mode must be 3 or 4 octal digits like 0644, was '" + mode + "'");
        }
        return mode;
    }

    record MoveBody(String from, String to, boolean overwrite) {
    }
}
