package io.stasis.server.s3;

import io.javalin.http.Context;
import io.stasis.core.files.FileInfo;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.spi.SandboxFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Multipart uploads: parts kept in a host directory outside every volume until the complete writes the object. */
final class S3Multipart {
    private static final Logger log = LoggerFactory.getLogger(S3Multipart.class);
    private static final Pattern UPLOAD_ID = Pattern.compile("[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");
    private static final int MAX_PARTS = 10_000;

    private final SandboxFiles files;
    private final Path uploads;
    private final ETags etags;
    private final long maxObjectBytes;

    S3Multipart(SandboxFiles files, Path uploads, ETags etags, long maxObjectBytes) {
        this.files = files;
        this.uploads = uploads;
        this.etags = etags;
        this.maxObjectBytes = maxObjectBytes;
    }

    /** CreateMultipartUpload ({@code ?uploads}) or CompleteMultipartUpload ({@code ?uploadId=}). */
    void post(Context ctx, S3Request r) throws IOException {
        if (ctx.queryParamMap().containsKey("uploads")) {
            S3Keys.path(r.key());
            String id = Ids.randomSuffix();
            Path dir = uploads.resolve(id);
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("target"), r.volume().id().value() + "\n" + r.key(), StandardCharsets.UTF_8);
            var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
            S3Xml.tag(xml, "Bucket", ctx.pathParam("bucket"));
            S3Xml.tag(xml, "Key", r.key());
            S3Xml.tag(xml, "UploadId", id);
            xml.append("</InitiateMultipartUploadResult>");
            ctx.status(200).contentType("application/xml").result(xml.toString());
            return;
        }
        String uploadId = ctx.queryParam("uploadId");
        if (uploadId == null) throw new S3Error(400, "InvalidRequest", "POST is for multipart uploads (?uploads, ?uploadId=)");
        complete(ctx, r, uploadId);
    }

    /** The directory of an upload of this volume and key; NoSuchUpload for anything else. */
    private Path upload(S3Request r, String uploadId) {
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

    void uploadPart(Context ctx, S3Request r, String uploadId) throws IOException {
        Path dir = upload(r, uploadId);
        int number = ctx.queryParamAsClass("partNumber", Integer.class).check(n -> n >= 1 && n <= MAX_PARTS, "1 to 10000").get();
        Path tmp = dir.resolve("part-" + number + "." + Ids.randomSuffix() + ".tmp");
        var md5 = ETags.md5();
        try (InputStream body = new DigestInputStream(S3Body.of(ctx, r), md5)) {
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

    private void complete(Context ctx, S3Request r, String uploadId) throws IOException {
        Path dir = upload(r, uploadId);
        String body = new String(S3Body.of(ctx, r).readAllBytes(), StandardCharsets.UTF_8);
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
                written = files.write(r.root(), S3Keys.path(r.key()), all, OptionalInt.empty(), Long.MAX_VALUE);
            }
        } finally {
            for (var s : streams) s.close();
        }
        deleteTree(dir);
        String etag = "\"" + HexFormat.of().formatHex(ETags.md5().digest(md5s.toByteArray())) + "-" + numbers.size() + "\"";
        etags.remember(r.volume().id(), r.key(), written, etag); // GET and HEAD answer the same ETag while the file is unchanged
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        S3Xml.tag(xml, "Location", ctx.fullUrl().split("\\?")[0]);
        S3Xml.tag(xml, "Bucket", ctx.pathParam("bucket"));
        S3Xml.tag(xml, "Key", r.key());
        S3Xml.tag(xml, "ETag", etag);
        xml.append("</CompleteMultipartUploadResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    /** AbortMultipartUpload: the parts go. */
    void abort(S3Request r, String uploadId) {
        deleteTree(upload(r, uploadId));
    }

    private static void deleteTree(Path dir) {
        try (var entries = Files.list(dir)) {
            for (Path p : entries.toList()) Files.deleteIfExists(p);
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            log.atWarn().addKeyValue("dir", dir).setCause(e).log("could not remove a multipart upload's parts");
        }
    }
}
