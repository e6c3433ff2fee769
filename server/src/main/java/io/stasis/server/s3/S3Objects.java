package io.stasis.server.s3;

import io.javalin.http.Context;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.SandboxFiles;
import io.stasis.core.volume.VolumeService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.OptionalInt;

/** GET, HEAD, PUT, CopyObject and deletes of objects: a volume's regular files, read and written confined. */
final class S3Objects {
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);

    private final VolumeService volumes;
    private final SandboxFiles files;
    private final ETags etags;
    private final long maxObjectBytes;

    S3Objects(VolumeService volumes, SandboxFiles files, ETags etags, long maxObjectBytes) {
        this.volumes = volumes;
        this.files = files;
        this.etags = etags;
        this.maxObjectBytes = maxObjectBytes;
    }

    void get(Context ctx, S3Request r) throws IOException {
        var path = S3Keys.path(r.key());
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

    void head(Context ctx, S3Request r) throws IOException {
        if (r.key().isEmpty()) {
            ctx.status(200);
            return;
        }
        var path = S3Keys.path(r.key());
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
    private String etagOf(S3Request r, SandboxPath path, FileInfo info) throws IOException {
        if (info.type() == FileType.FILE) {
            var known = etags.find(r.volume().id(), r.key(), info);
            if (known.isPresent()) return known.get();
        }
        var md5 = ETags.md5();
        try (var content = files.read(r.root(), path); InputStream in = new DigestInputStream(content.stream(), md5)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        String etag = ETags.quoted(md5);
        if (info.type() == FileType.FILE) etags.remember(r.volume().id(), r.key(), info, etag);
        return etag;
    }

    /** PutObject, or CopyObject with {@code x-amz-copy-source}. */
    void put(Context ctx, S3Request r) throws IOException {
        var path = S3Keys.path(r.key());
        String copySource = ctx.header("x-amz-copy-source");
        if (copySource != null) {
            if (ctx.queryParam("uploadId") != null) throw new S3Error(501, "NotImplemented", "UploadPartCopy is not supported");
            copy(ctx, r, path, copySource);
            return;
        }
        var md5 = ETags.md5();
        FileInfo written = null;
        try (InputStream body = new DigestInputStream(S3Body.of(ctx, r), md5)) {
            if (r.key().endsWith("/")) {
                // A "folder" marker: an empty object whose key ends in '/' is a directory.
                if (body.read() >= 0) throw new S3Error(400, "InvalidArgument", "an object whose key ends in '/' must be empty");
                files.mkdir(r.root(), path, OptionalInt.empty());
            } else {
                written = files.write(r.root(), path, body, OptionalInt.empty(), maxObjectBytes);
            }
        }
        String etag = ETags.quoted(md5);
        if (written != null) etags.remember(r.volume().id(), r.key(), written, etag);
        ctx.status(200).header("ETag", etag);
    }

    /**
     * CopyObject: {@code x-amz-copy-source: [/]bucket/key} (percent-encoded), from any volume of the
     * caller's tenant the caller may read, to the request's key. The copy streams through the
     * service and replaces the target atomically, as a PUT does.
     */
    private void copy(Context ctx, S3Request r, SandboxPath target, String header) throws IOException {
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
        var sourcePath = S3Keys.path(key);
        regularFile(fromRoot, key, sourcePath);
        if (r.key().endsWith("/")) throw new S3Error(400, "InvalidArgument", "a copy's target key must not end in '/'");
        var md5 = ETags.md5();
        FileInfo written;
        try (var content = files.read(fromRoot, sourcePath); InputStream in = new DigestInputStream(content.stream(), md5)) {
            written = files.write(r.root(), target, in, OptionalInt.empty(), maxObjectBytes);
        }
        String etag = ETags.quoted(md5);
        etags.remember(r.volume().id(), r.key(), written, etag);
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CopyObjectResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        S3Xml.tag(xml, "LastModified", S3Xml.ISO.format(written.mtime()));
        S3Xml.tag(xml, "ETag", etag);
        xml.append("</CopyObjectResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    /** Deletes an object, or the directory of a key ending in '/' if it is empty; a key that is not there is no error. */
    void deleteObject(Path root, String key) {
        var path = S3Keys.path(key);
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
    void deleteObjects(Context ctx, S3Request r) throws IOException {
        if (!r.key().isEmpty()) throw new S3Error(400, "InvalidRequest", "DeleteObjects is a request on the bucket, not on a key");
        var request = DeleteObjectsRequest.parse(S3Body.of(ctx, r).readAllBytes());
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        for (String key : request.keys()) {
            try {
                deleteObject(r.root(), key);
                if (!request.quiet()) {
                    xml.append("<Deleted>");
                    S3Xml.tag(xml, "Key", key);
                    xml.append("</Deleted>");
                }
            } catch (S3Error | StasisException e) {
                var error = e instanceof S3Error s ? s : S3Error.from((StasisException) e);
                xml.append("<Error>");
                S3Xml.tag(xml, "Key", key);
                S3Xml.tag(xml, "Code", error.code);
                S3Xml.tag(xml, "Message", e.getMessage());
                xml.append("</Error>");
            }
        }
        xml.append("</DeleteResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }
}
