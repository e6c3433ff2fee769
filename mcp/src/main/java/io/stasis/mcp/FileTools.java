package io.stasis.mcp;

import static io.stasis.mcp.JsonSchemas.bool;
import static io.stasis.mcp.JsonSchemas.enumeration;
import static io.stasis.mcp.JsonSchemas.integer;
import static io.stasis.mcp.JsonSchemas.object;
import static io.stasis.mcp.JsonSchemas.string;
import static io.stasis.mcp.SandboxTools.SANDBOX_DESCRIPTION;

import io.stasis.mcp.StasisTool.Kind;
import io.stasis.sdk.FileInfo;
import io.stasis.sdk.Page;
import io.stasis.sdk.SandboxFiles;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.stream.Collectors;

/** Tools on a sandbox's files: read, write, list, stat, move, remove. */
final class FileTools {
    static final String PATH_DESCRIPTION = "Absolute path inside the sandbox, e.g. /root/app.py.";
    static final int READ_BYTES = 100_000;
    static final int READ_BYTES_MAX = 4 << 20;

    private FileTools() {
    }

    static List<StasisTool> all() {
        return List.of(read(), write(), list(), stat(), move(), remove());
    }

    private static StasisTool read() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("path", string(PATH_DESCRIPTION))
                .optional("offset", integer("Byte offset to start reading at (default 0).", 0, Long.MAX_VALUE))
                .optional("maxBytes", integer("At most this many bytes (default " + READ_BYTES + ").", 1, READ_BYTES_MAX))
                .build();
        return new StasisTool("file_read", "Read file", "Reads a file of the sandbox as text (UTF-8); a file that is "
                + "not valid UTF-8 comes back base64-encoded. Long files are read in parts with offset and maxBytes.",
                schema, Kind.READ, (client, args) -> {
                    String path = args.string("path");
                    long offset = args.integer("offset", 0, 0, Long.MAX_VALUE);
                    int max = (int) args.integer("maxBytes", READ_BYTES, 1, READ_BYTES_MAX);
                    Part part = readPart(client.sandboxes().files(args.string("sandbox")), path, offset, max);
                    return part.result(path, offset);
                });
    }

    /** Bytes {@code offset..offset+max} of a file, and whether more follow. */
    record Part(byte[] bytes, int length, boolean more) {
        ToolResult result(String path, long offset) {
            String text = Texts.utf8OrNull(bytes, length);
            var json = new LinkedHashMap<String, Object>();
            json.put("path", path);
            json.put("offset", offset);
            json.put("bytes", length);
            json.put("more", more);
            String note = more ? "\n[more: call again with offset=" + (offset + length) + "]" : "";
            if (text != null) {
                json.put("encoding", "utf-8");
                json.put("content", text);
                return ToolResult.structured(text + note, json);
            }
            String base64 = Base64.getEncoder().encodeToString(Arrays.copyOf(bytes, length));
            json.put("encoding", "base64");
            json.put("content", base64);
            return ToolResult.structured("[" + path + " is not UTF-8 text; " + length + " bytes from offset " + offset
                    + " as base64]\n" + base64 + note, json);
        }
    }

    static Part readPart(SandboxFiles files, String path, long offset, int max) {
        try (InputStream in = files.readStream(path)) {
            in.skipNBytes(offset);
            byte[] bytes = in.readNBytes(max + 1);
            boolean more = bytes.length > max;
            int length = more ? Texts.utf8Prefix(bytes, max) : bytes.length;
            return new Part(bytes, length, more);
        } catch (EOFException e) {
            return new Part(new byte[0], 0, false);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path + ": " + e.getMessage(), e);
        }
    }

    private static StasisTool write() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("path", string(PATH_DESCRIPTION + " Missing parent directories are created."))
                .required("content", string("The whole new content of the file."))
                .optional("encoding", enumeration("How 'content' is given: utf-8 text (default) or base64 bytes.",
                        "utf-8", "base64"))
                .optional("mode", string("Permissions in octal, e.g. 0755 for a script (default: 0644, or the "
                        + "existing file's)."))
                .build();
        return new StasisTool("file_write", "Write file", "Creates or replaces a file in the sandbox with the given "
                + "content (atomically: readers see the old or the new file, never a mix).",
                schema, Kind.IDEMPOTENT, (client, args) -> {
                    String content = args.present("content");
                    byte[] bytes = "base64".equals(args.choice("encoding", "utf-8", "utf-8", "base64"))
                            ? decodeBase64(content) : content.getBytes(StandardCharsets.UTF_8);
                    FileInfo info = client.sandboxes().files(args.string("sandbox"))
                            .write(args.string("path"), bytes, args.optString("mode"));
                    return ToolResult.of("wrote " + info.size() + " bytes to " + info.path() + " (mode " + info.mode() + ")", info);
                });
    }

    private static byte[] decodeBase64(String content) {
        try {
            return Base64.getMimeDecoder().decode(content);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentsException("'content' is not base64: " + e.getMessage());
        }
    }

    private static StasisTool list() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .optional("path", string("The directory (default /root)."))
                .optional("limit", integer("At most this many entries (default 500), sorted by name.", 1, 1000))
                .build();
        return new StasisTool("file_list", "List directory", "Lists a directory of the sandbox, one entry a line: "
                + "type, size in bytes, mode, modification time, path.", schema, Kind.READ, (client, args) -> {
                    String path = args.has("path") ? args.string("path") : "/root";
                    Page<FileInfo> page = client.sandboxes().files(args.string("sandbox"))
                            .listPage(path, (int) args.integer("limit", 500, 1, 1000), null);
                    List<FileInfo> items = page.items();
                    String text = items.isEmpty() ? path + " is empty"
                            : items.stream().map(Texts::file).collect(Collectors.joining("\n"));
                    if (page.hasNextPage()) text += "\n(more entries: raise 'limit')";
                    return ToolResult.list(text, items);
                });
    }

    private static StasisTool stat() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("path", string(PATH_DESCRIPTION))
                .build();
        return new StasisTool("file_stat", "Stat file", "Describes one file, directory or symlink (not followed): "
                + "type, size, mode, modification time. Answers an error file_not_found when nothing is there.",
                schema, Kind.READ, (client, args) -> {
                    FileInfo info = client.sandboxes().files(args.string("sandbox")).stat(args.string("path"));
                    return ToolResult.of(Texts.file(info), info);
                });
    }

    private static StasisTool move() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("from", string("The path to move or rename."))
                .required("to", string("The new path."))
                .optional("overwrite", bool("true: replace what is at 'to' (default false: an error file_exists)."))
                .build();
        return new StasisTool("file_move", "Move file", "Moves or renames a file or directory inside the sandbox.",
                schema, Kind.CHANGE, (client, args) -> {
                    FileInfo info = client.sandboxes().files(args.string("sandbox"))
                            .move(args.string("from"), args.string("to"), args.bool("overwrite", false));
                    return ToolResult.of("moved " + args.string("from") + " to " + Texts.file(info), info);
                });
    }

    private static StasisTool remove() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("path", string(PATH_DESCRIPTION))
                .optional("recursive", bool("true: remove a directory with everything in it (default false: only "
                        + "files and empty directories)."))
                .build();
        return new StasisTool("file_remove", "Remove file", "Removes a file, symlink or directory from the sandbox.",
                schema, Kind.DESTRUCTIVE, (client, args) -> {
                    String path = args.string("path");
                    client.sandboxes().files(args.string("sandbox")).delete(path, args.bool("recursive", false));
                    return ToolResult.text("removed " + path);
                });
    }
}
