package io.stasis.server.s3;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.auth.Caller;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.spi.SandboxFiles;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.HttpApi;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An S3-compatible endpoint for volumes, path-style: {@code /s3/<volume id or name>/<key>}. GET,
 * PUT, HEAD and DELETE of objects, ListObjectsV2, and multipart uploads (create, upload part,
 * complete, abort). Objects are the volume's regular files; a key's {@code /} are directories.
 *
 * <p><b>Authentication</b>: AWS Signature Version 4 whose access key id is the credential itself
 * (an API key {@code sk_...} or a volume-scoped token {@code st_...}) and whose secret access key
 * is the same credential, or {@code Authorization: Bearer <credential>}. A token must be scoped
 * to the volume, with {@code volume:read} to read and {@code volume:write} to write.
 *
 * <p><b>Confinement</b>: every file access goes through {@link SandboxFiles} on the volume's
 * directory ({@code openat2} with {@code RESOLVE_IN_ROOT}): keys with {@code .} or {@code ..}
 * segments, empty segments or a leading {@code /} are refused, and symlinks a sandbox put in the
 * volume resolve inside it, never outside.
 */
public final class S3Routes {
    private static final Logger log = LoggerFactory.getLogger(S3Routes.class);
    private static final String PREFIX = "/s3";
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final Pattern UPLOAD_ID = Pattern.compile("[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");
    private static final int MAX_PARTS = 10_000;

    private final VolumeService volumes;
    private final BearerAuth auth;
    private final SandboxFiles files;
    private final Path uploads;
    private final Clock clock;
    private final long maxObjectBytes;
    private final ETags etags = new ETags();

    /**
     * @param uploads        a host directory for the parts of multipart uploads in progress (outside every volume)
     * @param maxObjectBytes the largest object or part a PUT may send
     */
    public S3Routes(VolumeService volumes, BearerAuth auth, SandboxFiles files, Path uploads, Clock clock, long maxObjectBytes) {
        this.volumes = volumes;
        this.auth = auth;
        this.files = files;
        this.uploads = uploads;
        this.clock = clock;
        this.maxObjectBytes = maxObjectBytes;
        try {
            Files.createDirectories(uploads);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void register(RoutesConfig routes) {
        for (String path : List.of(PREFIX + "/{bucket}", PREFIX + "/{bucket}/<key>")) {
            routes.get(path, ctx -> handle(ctx, this::get), Access.PUBLIC);
            routes.head(path, ctx -> handle(ctx, this::head), Access.PUBLIC);
            routes.put(path, ctx -> handle(ctx, this::put), Access.PUBLIC);
            routes.delete(path, ctx -> handle(ctx, this::delete), Access.PUBLIC);
            routes.post(path, ctx -> handle(ctx, this::post), Access.PUBLIC);
        }
    }

    private interface Operation {
        void run(Context ctx, Request request) throws IOException;
    }

    /** A request after authentication: its volume, key (empty for the bucket), caller and how its body is to be read. */
    private record Request(Volume volume, Path root, String key, Caller caller, SigV4.Verified signed) {
    }

    private void handle(Context ctx, Operation operation) {
        try {
            var request = authenticate(ctx);
            operation.run(ctx, request);
        } catch (S3Error e) {
            writeError(ctx, e.status, e.code, e.getMessage());
        } catch (SigV4.Refused e) {
            writeError(ctx, e.code.equals("InvalidRequest") || e.code.equals("AuthorizationHeaderMalformed") ? 400 : 403, e.code, e.getMessage());
        } catch (StasisException e) {
            var mapped = map(e);
            writeError(ctx, mapped.status, mapped.code, e.getMessage());
        } catch (IOException | UncheckedIOException e) {
            log.atWarn().addKeyValue("path", ctx.path()).setCause(e).log("S3 request failed");
            writeError(ctx, 400, "IncompleteBody", "the request body could not be read: " + e.getMessage());
        }
    }

    private static S3Error map(StasisException e) {
        return switch (e.code()) {
            case VOLUME_NOT_FOUND -> new S3Error(404, "NoSuchBucket", e.getMessage());
            case FILE_NOT_FOUND, IS_A_DIRECTORY, NOT_A_DIRECTORY -> new S3Error(404, "NoSuchKey", e.getMessage());
            case UNAUTHENTICATED -> new S3Error(403, "InvalidAccessKeyId", e.getMessage());
            case FORBIDDEN -> new S3Error(403, "AccessDenied", e.getMessage());
            case QUOTA_EXCEEDED -> new S3Error(507, "InsufficientStorage", e.getMessage());
            case PAYLOAD_TOO_LARGE -> new S3Error(400, "EntityTooLarge", e.getMessage());
            case INVALID_REQUEST, MALFORMED_REQUEST, FILE_EXISTS, DIRECTORY_NOT_EMPTY -> new S3Error(400, "InvalidArgument", e.getMessage());
            default -> {
                log.atWarn().addKeyValue("code", e.code().wireName()).setCause(e).log("S3 request failed");
                yield new S3Error(500, "InternalError", e.getMessage());
            }
        };
    }

    static final class S3Error extends RuntimeException {
        final int status;
        final String code;

        S3Error(int status, String code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }

    private Request authenticate(Context ctx) {
        String header = ctx.header("Authorization");
        Caller caller;
        SigV4.Verified signed = null;
        if (header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            caller = auth.authenticate(header);
        } else {
            var fields = SigV4.parse(header);
            String accessKeyId = fields.get("Credential").split("/")[0];
            caller = auth.authenticate("Bearer " + accessKeyId);
            var request = new SigV4.Request(ctx.method().name(), ctx.req().getRequestURI(), ctx.req().getQueryString(),
                    name -> Collections.list(ctx.req().getHeaders(name)));
            signed = SigV4.verify(request, fields, accessKeyId, clock.instant());
        }
        String bucket = ctx.pathParam("bucket");
        var volume = volumes.get(caller.tenant(), bucket);
        boolean writes = switch (ctx.method().name()) {
            case "PUT", "DELETE", "POST" -> true;
            default -> false;
        };
        AccessGuard.requireVolumeScope(caller, writes ? Access.VOLUME_WRITE : Access.VOLUME_READ, volume.id().value(), bucket);
        String key = ctx.pathParamMap().containsKey("key") ? ctx.pathParam("key") : "";
        return new Request(volume, volumes.hostPath(volume.id()), key, caller, signed);
    }

    /** The key as a path inside the volume: plain segments only. */
    private static SandboxPath path(String key) {
        if (key.isEmpty() || key.length() > 1024) throw new S3Error(400, "InvalidArgument", "a key is 1 to 1024 characters");
        if (key.startsWith("/") || key.indexOf('\0') >= 0) throw new S3Error(400, "InvalidArgument", "a key must not start with '/' or hold NUL");
        String[] segments = key.split("/", -1);
        for (int i = 0; i < segments.length; i++) {
            String s = segments[i];
            boolean trailingEmpty = i == segments.length - 1 && s.isEmpty();
            if (!trailingEmpty && (s.isEmpty() || s.equals(".") || s.equals("..")))
                throw new S3Error(400, "InvalidArgument", "a key's segments must not be empty, '.' or '..': '" + key + "'");
        }
        return new SandboxPath("/" + key);
    }

    // --- objects ---

    private void get(Context ctx, Request r) throws IOException {
        if (r.key().isEmpty()) {
            list(ctx, r);
            return;
        }
        var path = path(r.key());
        var info = regularFile(r.root(), r.key(), path);
        String etag = etagOf(r, path, info);
        headers(ctx, info, etag);
        try (var content = files.read(r.root(), path)) {
            switch (ByteRange.of(ctx.header("Range"), content.size())) {
                case ByteRange.Whole() -> {
                    ctx.status(200).header("Content-Type", "application/octet-stream").header("Content-Length", Long.toString(content.size()));
                    try (var out = ctx.res().getOutputStream()) {
                        transfer(content.stream(), out, content.size());
                    }
                }
                case ByteRange.Slice slice -> {
                    ctx.status(206).header("Content-Type", "application/octet-stream").header("Content-Range", slice.contentRange())
                            .header("Content-Length", Long.toString(slice.length()));
                    InputStream in = content.stream();
                    in.skipNBytes(slice.first()); // a file channel's skip is a seek
                    try (var out = ctx.res().getOutputStream()) {
                        transfer(in, out, slice.length());
                    }
                }
                case ByteRange.Unsatisfiable none -> {
                    ctx.header("Content-Range", none.contentRange());
                    throw new S3Error(416, "InvalidRange", "the requested range is not satisfiable: the object has " + none.size() + " bytes");
                }
            }
        }
    }

    private static void transfer(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buffer = new byte[64 << 10];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) throw new IOException("the object ended " + left + " bytes early (truncated while read)");
            out.write(buffer, 0, n);
            left -= n;
        }
    }

    private void head(Context ctx, Request r) throws IOException {
        if (r.key().isEmpty()) {
            ctx.status(200);
            return;
        }
        var path = path(r.key());
        var info = regularFile(r.root(), r.key(), path);
        headers(ctx, info, etagOf(r, path, info));
        long size;
        try (var content = files.read(r.root(), path)) {
            size = content.size();
        }
        ctx.status(200).header("Content-Type", "application/octet-stream").header("Content-Length", Long.toString(size));
    }

    private FileInfo regularFile(Path root, String key, SandboxPath path) {
        if (key.endsWith("/")) throw new S3Error(404, "NoSuchKey", "no object '" + key + "'");
        var info = files.stat(root, path);
        // A symlink is followed, inside the volume only (the reads resolve it confined); a directory is no object.
        if (info.type() != FileType.FILE && info.type() != FileType.SYMLINK) throw new S3Error(404, "NoSuchKey", "no object '" + key + "'");
        return info;
    }

    private static void headers(Context ctx, FileInfo info, String etag) {
        ctx.header("ETag", etag).header("Last-Modified", HTTP_DATE.format(info.mtime())).header("Accept-Ranges", "bytes");
    }

    /** The ETag of a stored object: the MD5 of its bytes, as S3 gives for objects uploaded in one piece; hashed once per version. */
    private String etagOf(Request r, SandboxPath path, FileInfo info) throws IOException {
        if (info.type() == FileType.FILE) {
            var known = etags.find(r.volume().id(), r.key(), info);
            if (known.isPresent()) return known.get();
        }
        var md5 = md5();
        try (var content = files.read(r.root(), path); InputStream in = new DigestInputStream(content.stream(), md5)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        String etag = quoted(md5);
        if (info.type() == FileType.FILE) etags.remember(r.volume().id(), r.key(), info, etag);
        return etag;
    }

    private static String quoted(MessageDigest md5) {
        return "\"" + HexFormat.of().formatHex(md5.digest()) + "\"";
    }

    private void put(Context ctx, Request r) throws IOException {
        if (r.key().isEmpty()) throw new S3Error(409, "BucketAlreadyOwnedByYou", "volumes are created through POST /v1/volumes");
        var path = path(r.key());
        String uploadId = ctx.queryParam("uploadId");
        String copySource = ctx.header("x-amz-copy-source");
        if (copySource != null) {
            if (uploadId != null) throw new S3Error(501, "NotImplemented", "UploadPartCopy is not supported");
            copy(ctx, r, path, copySource);
            return;
        }
        if (uploadId != null) {
            uploadPart(ctx, r, uploadId);
            return;
        }
        var md5 = md5();
        FileInfo written = null;
        try (InputStream body = new DigestInputStream(body(ctx, r), md5)) {
            if (r.key().endsWith("/")) {
                // A "folder" marker: an empty object whose key ends in '/' is a directory.
                if (body.read() >= 0) throw new S3Error(400, "InvalidArgument", "an object whose key ends in '/' must be empty");
                files.mkdir(r.root(), path, OptionalInt.empty());
            } else {
                written = files.write(r.root(), path, body, OptionalInt.empty(), maxObjectBytes);
            }
        }
        String etag = quoted(md5);
        if (written != null) etags.remember(r.volume().id(), r.key(), written, etag);
        ctx.status(200).header("ETag", etag);
    }

    /**
     * CopyObject: {@code x-amz-copy-source: [/]bucket/key} (percent-encoded), from any volume of the
     * caller's tenant the caller may read, to the request's key. The copy streams through the
     * service and replaces the target atomically, as a PUT does.
     */
    private void copy(Context ctx, Request r, SandboxPath target, String header) throws IOException {
        String source = SigV4.decode(header.startsWith("/") ? header.substring(1) : header);
        if (source.contains("?versionId=")) throw new S3Error(501, "NotImplemented", "volumes keep no versions");
        int slash = source.indexOf('/');
        if (slash <= 0 || slash == source.length() - 1)
            throw new S3Error(400, "InvalidArgument", "x-amz-copy-source must be bucket/key, not '" + header + "'");
        String bucket = source.substring(0, slash);
        String key = source.substring(slash + 1);
        var from = volumes.get(r.caller().tenant(), bucket);
        AccessGuard.requireVolumeScope(r.caller(), Access.VOLUME_READ, from.id().value(), bucket);
        Path fromRoot = volumes.hostPath(from.id());
        var sourcePath = path(key);
        regularFile(fromRoot, key, sourcePath);
        if (r.key().endsWith("/")) throw new S3Error(400, "InvalidArgument", "a copy's target key must not end in '/'");
        var md5 = md5();
        FileInfo written;
        try (var content = files.read(fromRoot, sourcePath); InputStream in = new DigestInputStream(content.stream(), md5)) {
            written = files.write(r.root(), target, in, OptionalInt.empty(), maxObjectBytes);
        }
        String etag = quoted(md5);
        etags.remember(r.volume().id(), r.key(), written, etag);
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CopyObjectResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        tag(xml, "LastModified", ISO.format(written.mtime()));
        tag(xml, "ETag", etag);
        xml.append("</CopyObjectResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    /** The request body as sent: checked against its SHA-256, or decoded from aws-chunked with each chunk's signature checked. */
    private InputStream body(Context ctx, Request r) throws IOException {
        InputStream raw = ctx.req().getInputStream();
        if (r.signed() == null) return raw;
        String hash = r.signed().payloadHash();
        return switch (hash) {
            case "UNSIGNED-PAYLOAD" -> raw;
            case "STREAMING-UNSIGNED-PAYLOAD-TRAILER" -> new AwsChunkedInputStream(raw, null);
            case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" -> new AwsChunkedInputStream(raw, r.signed());
            default -> {
                if (!hash.matches("[0-9a-f]{64}")) throw new S3Error(400, "InvalidRequest", "x-amz-content-sha256 '" + hash + "' is not supported");
                yield new VerifiedInputStream(raw, hash);
            }
        };
    }

    private void delete(Context ctx, Request r) throws IOException {
        if (r.key().isEmpty()) throw new S3Error(409, "BucketNotEmpty", "volumes are deleted through DELETE /v1/volumes/{vid}");
        String uploadId = ctx.queryParam("uploadId");
        if (uploadId != null) {
            deleteTree(upload(r, uploadId));
            ctx.status(204);
            return;
        }
        deleteObject(r.root(), r.key());
        ctx.status(204); // S3 answers 204 for a key that was not there too
    }

    /** Deletes an object, or the directory of a key ending in '/' if it is empty; a key that is not there is no error. */
    private void deleteObject(Path root, String key) {
        var path = path(key);
        try {
            var info = files.stat(root, path);
            if (info.type() == FileType.DIRECTORY && !key.endsWith("/")) throw new S3Error(404, "NoSuchKey", "no object '" + key + "'");
            files.delete(root, path, false);
        } catch (StasisException e) {
            if (e.code() != ErrorCode.FILE_NOT_FOUND && e.code() != ErrorCode.DIRECTORY_NOT_EMPTY) throw e;
        }
    }

    /**
     * DeleteObjects ({@code POST ?delete}): up to 1000 keys, each deleted as DeleteObject would; the
     * answer lists each key deleted (unless Quiet) and each that failed with its error.
     */
    private void deleteObjects(Context ctx, Request r) throws IOException {
        if (!r.key().isEmpty()) throw new S3Error(400, "InvalidRequest", "DeleteObjects is a request on the bucket, not on a key");
        var request = DeleteObjectsRequest.parse(body(ctx, r).readAllBytes());
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        for (String key : request.keys()) {
            try {
                deleteObject(r.root(), key);
                if (!request.quiet()) {
                    xml.append("<Deleted>");
                    tag(xml, "Key", key);
                    xml.append("</Deleted>");
                }
            } catch (S3Error | StasisException e) {
                var error = e instanceof S3Error s ? s : map((StasisException) e);
                xml.append("<Error>");
                tag(xml, "Key", key);
                tag(xml, "Code", error.code);
                tag(xml, "Message", e.getMessage());
                xml.append("</Error>");
            }
        }
        xml.append("</DeleteResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    // --- listing ---

    private void list(Context ctx, Request r) {
        String prefix = ctx.queryParamAsClass("prefix", String.class).getOrDefault("");
        String delimiter = ctx.queryParamAsClass("delimiter", String.class).getOrDefault("");
        int maxKeys = Math.clamp(ctx.queryParamAsClass("max-keys", Integer.class).getOrDefault(1000), 0, 1000);
        String token = ctx.queryParam("continuation-token");
        String startAfter = ctx.queryParamAsClass("start-after", String.class).getOrDefault("");
        if (token != null) startAfter = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        var all = new TreeMap<String, FileInfo>();
        walk(r.root(), "", prefix, all);
        var contents = new ArrayList<Map.Entry<String, FileInfo>>();
        var prefixes = new TreeSet<String>();
        String last = null;
        boolean truncated = false;
        for (var e : all.tailMap(startAfter, false).entrySet()) {
            String key = e.getKey();
            if (!key.startsWith(prefix)) continue;
            String group = null;
            if (!delimiter.isEmpty()) {
                int at = key.indexOf(delimiter, prefix.length());
                if (at >= 0) group = key.substring(0, at + delimiter.length());
            }
            if (group != null && prefixes.contains(group)) continue;
            if (contents.size() + prefixes.size() >= maxKeys) {
                truncated = true;
                break;
            }
            if (group != null) {
                prefixes.add(group);
                last = group + "\uffff"; // continue after every key in the group
            } else {
                contents.add(e);
                last = key;
            }
        }
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        tag(xml, "Name", ctx.pathParam("bucket"));
        tag(xml, "Prefix", prefix);
        if (!delimiter.isEmpty()) tag(xml, "Delimiter", delimiter);
        tag(xml, "MaxKeys", Integer.toString(maxKeys));
        tag(xml, "KeyCount", Integer.toString(contents.size() + prefixes.size()));
        tag(xml, "IsTruncated", Boolean.toString(truncated));
        if (token != null) tag(xml, "ContinuationToken", token);
        if (truncated && last != null)
            tag(xml, "NextContinuationToken", Base64.getUrlEncoder().withoutPadding().encodeToString(last.getBytes(StandardCharsets.UTF_8)));
        for (var e : contents) {
            xml.append("<Contents>");
            tag(xml, "Key", e.getKey());
            tag(xml, "LastModified", ISO.format(e.getValue().mtime()));
            tag(xml, "Size", Long.toString(e.getValue().size()));
            tag(xml, "StorageClass", "STANDARD");
            xml.append("</Contents>");
        }
        for (String p : prefixes) {
            xml.append("<CommonPrefixes>");
            tag(xml, "Prefix", p);
            xml.append("</CommonPrefixes>");
        }
        xml.append("</ListBucketResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    /** Every regular file below {@code dir} whose key could start with {@code prefix}; symlinks are not objects. */
    private void walk(Path root, String dir, String prefix, Map<String, FileInfo> out) {
        List<FileInfo> entries;
        try {
            entries = files.list(root, new SandboxPath("/" + dir));
        } catch (StasisException e) {
            return; // gone meanwhile, or not a directory
        }
        for (var entry : entries) {
            String key = dir + entry.name();
            if (entry.type() == FileType.FILE) {
                if (key.startsWith(prefix)) out.put(key, entry);
            } else if (entry.type() == FileType.DIRECTORY) {
                String sub = key + "/";
                if (sub.startsWith(prefix) || prefix.startsWith(sub)) walk(root, sub, prefix, out);
            }
        }
    }

    // --- multipart ---

    private void post(Context ctx, Request r) throws IOException {
        if (ctx.queryParamMap().containsKey("delete")) {
            deleteObjects(ctx, r);
            return;
        }
        if (ctx.queryParamMap().containsKey("uploads")) {
            path(r.key());
            String id = Ids.randomSuffix();
            Path dir = uploads.resolve(id);
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("target"), r.volume().id().value() + "\n" + r.key(), StandardCharsets.UTF_8);
            var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
            tag(xml, "Bucket", ctx.pathParam("bucket"));
            tag(xml, "Key", r.key());
            tag(xml, "UploadId", id);
            xml.append("</InitiateMultipartUploadResult>");
            ctx.status(200).contentType("application/xml").result(xml.toString());
            return;
        }
        String uploadId = ctx.queryParam("uploadId");
        if (uploadId == null) throw new S3Error(400, "InvalidRequest", "POST is for multipart uploads (?uploads, ?uploadId=)");
        complete(ctx, r, uploadId);
    }

    /** The directory of an upload of this volume and key; NoSuchUpload for anything else. */
    private Path upload(Request r, String uploadId) {
        if (!UPLOAD_ID.matcher(uploadId).matches()) throw noSuchUpload(uploadId);
        Path dir = uploads.resolve(uploadId);
        try {
            String target = Files.readString(dir.resolve("target"), StandardCharsets.UTF_8);
            if (!target.equals(r.volume().id().value() + "\n" + r.key())) throw noSuchUpload(uploadId);
        } catch (IOException e) {
            throw noSuchUpload(uploadId);
        }
        return dir;
    }

    private static S3Error noSuchUpload(String id) {
        return new S3Error(404, "NoSuchUpload", "no multipart upload '" + id + "' for this key");
    }

    private void uploadPart(Context ctx, Request r, String uploadId) throws IOException {
        Path dir = upload(r, uploadId);
        int number = ctx.queryParamAsClass("partNumber", Integer.class).check(n -> n >= 1 && n <= MAX_PARTS, "1 to 10000").get();
        Path tmp = dir.resolve("part-" + number + "." + Ids.randomSuffix() + ".tmp");
        var md5 = md5();
        try (InputStream body = new DigestInputStream(body(ctx, r), md5)) {
            long copied = Files.copy(body, tmp);
            if (copied > maxObjectBytes) throw new S3Error(400, "EntityTooLarge", "a part may hold at most " + maxObjectBytes + " bytes");
            Files.move(tmp, dir.resolve("part-" + number), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        String etag = HexFormat.of().formatHex(md5.digest());
        Files.writeString(dir.resolve("part-" + number + ".md5"), etag);
        ctx.status(200).header("ETag", "\"" + etag + "\"");
    }

    private static final Pattern PART = Pattern.compile("<PartNumber>\\s*(\\d+)\\s*</PartNumber>");

    private void complete(Context ctx, Request r, String uploadId) throws IOException {
        Path dir = upload(r, uploadId);
        String body = new String(body(ctx, r).readAllBytes(), StandardCharsets.UTF_8);
        var numbers = new ArrayList<Integer>();
        var m = PART.matcher(body);
        while (m.find()) numbers.add(Integer.parseInt(m.group(1)));
        if (numbers.isEmpty()) throw new S3Error(400, "MalformedXML", "CompleteMultipartUpload lists no parts");
        for (int i = 1; i < numbers.size(); i++)
            if (numbers.get(i) <= numbers.get(i - 1)) throw new S3Error(400, "InvalidPartOrder", "parts must be listed in ascending order");
        var streams = new ArrayList<InputStream>();
        var md5s = new ByteArrayOutputStream();
        FileInfo written;
        try {
            for (int n : numbers) {
                Path part = dir.resolve("part-" + n);
                if (!Files.isRegularFile(part)) throw new S3Error(400, "InvalidPart", "part " + n + " was not uploaded");
                md5s.write(HexFormat.of().parseHex(Files.readString(dir.resolve("part-" + n + ".md5")).strip()));
                streams.add(Files.newInputStream(part));
            }
            try (InputStream all = new SequenceInputStream(Collections.enumeration(streams))) {
                written = files.write(r.root(), path(r.key()), all, OptionalInt.empty(), Long.MAX_VALUE);
            }
        } finally {
            for (var s : streams) s.close();
        }
        deleteTree(dir);
        String etag = "\"" + HexFormat.of().formatHex(md5().digest(md5s.toByteArray())) + "-" + numbers.size() + "\"";
        etags.remember(r.volume().id(), r.key(), written, etag); // GET and HEAD answer the same ETag while the file is unchanged
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        tag(xml, "Location", ctx.fullUrl().split("\\?")[0]);
        tag(xml, "Bucket", ctx.pathParam("bucket"));
        tag(xml, "Key", r.key());
        tag(xml, "ETag", etag);
        xml.append("</CompleteMultipartUploadResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    private static void deleteTree(Path dir) {
        try (var entries = Files.list(dir)) {
            for (Path p : entries.toList()) Files.deleteIfExists(p);
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            log.atWarn().addKeyValue("dir", dir).setCause(e).log("could not remove a multipart upload's parts");
        }
    }

    // --- XML ---

    private static void tag(StringBuilder xml, String name, String value) {
        xml.append('<').append(name).append('>').append(escape(value)).append("</").append(name).append('>');
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;").replace("'", "&apos;");
    }

    private void writeError(Context ctx, int status, String code, String message) {
        drain(ctx);
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>");
        tag(xml, "Code", code);
        tag(xml, "Message", message == null ? code : message);
        tag(xml, "Resource", ctx.path());
        tag(xml, "RequestId", String.valueOf(ctx.res().getHeader("X-Request-Id")));
        xml.append("</Error>");
        ctx.attribute(HttpApi.ERROR_WRITTEN, true);
        ctx.status(status).contentType("application/xml");
        if (!ctx.method().name().equals("HEAD")) ctx.result(xml.toString());
    }

    /**
     * Reads what is left of a refused upload's body (up to the largest object), so that the client,
     * still sending, gets the error instead of a broken pipe.
     */
    private void drain(Context ctx) {
        String method = ctx.method().name();
        if (!method.equals("PUT") && !method.equals("POST")) return;
        try {
            var in = ctx.req().getInputStream();
            byte[] buffer = new byte[64 << 10];
            long left = maxObjectBytes;
            int n;
            while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) left -= n;
        } catch (IOException | RuntimeException e) {
            // the connection is going anyway
        }
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is always there", e);
        }
    }

    /** A body checked against the SHA-256 the signed request announced: a mismatch fails the read at its end. */
    private static final class VerifiedInputStream extends FilterInputStream {
        private final MessageDigest digest;
        private final String expected;
        private boolean checked;

        VerifiedInputStream(InputStream in, String expected) {
            super(in);
            try {
                this.digest = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            this.expected = expected;
        }

        @Override
        public int read() throws IOException {
            int c = in.read();
            if (c >= 0) digest.update((byte) c);
            else check();
            return c;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) digest.update(b, off, n);
            else if (n < 0) check();
            return n;
        }

        private void check() throws IOException {
            if (checked) return;
            checked = true;
            if (!HexFormat.of().formatHex(digest.digest()).equals(expected))
                throw new IOException("the body's SHA-256 is not the x-amz-content-sha256 that was signed");
        }
    }
}
