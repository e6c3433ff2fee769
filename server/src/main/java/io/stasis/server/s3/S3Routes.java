package io.stasis.server.s3;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.auth.Caller;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.SandboxFiles;
import io.stasis.core.volume.VolumeService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.HttpApi;
import io.stasis.server.http.NodeForwarder;
import io.stasis.server.http.RefusedBodies;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
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

    private final VolumeService volumes;
    private final BearerAuth auth;
    private final Clock clock;
    private final long maxObjectBytes;
    private final S3Objects objects;
    private final S3Listing listing;
    private final S3Multipart multipart;

    /**
     * @param uploads        a host directory for the parts of multipart uploads in progress (outside every volume)
     * @param maxObjectBytes the largest object or part a PUT may send
     */
    public S3Routes(VolumeService volumes, BearerAuth auth, SandboxFiles files, Path uploads, Clock clock, long maxObjectBytes) {
        this.volumes = volumes;
        this.auth = auth;
        this.clock = clock;
        this.maxObjectBytes = maxObjectBytes;
        var etags = new ETags();
        this.objects = new S3Objects(volumes, files, etags, maxObjectBytes);
        this.listing = new S3Listing(files);
        this.multipart = new S3Multipart(files, uploads, etags, maxObjectBytes);
        try {
            Files.createDirectories(uploads);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @param nodes for a bucket whose volume is on another node: this node checks the caller, that node serves the call */
    public void register(RoutesConfig routes, NodeForwarder nodes) {
        for (String path : List.of(PREFIX + "/{bucket}", PREFIX + "/{bucket}/<key>")) {
            routes.get(path, ctx -> handle(ctx, nodes, this::get), Access.PUBLIC);
            routes.head(path, ctx -> handle(ctx, nodes, this::head), Access.PUBLIC);
            routes.put(path, ctx -> handle(ctx, nodes, this::put), Access.PUBLIC);
            routes.delete(path, ctx -> handle(ctx, nodes, this::delete), Access.PUBLIC);
            routes.post(path, ctx -> handle(ctx, nodes, this::post), Access.PUBLIC);
        }
    }

    private interface Operation {
        void run(Context ctx, S3Request request) throws IOException;
    }

    private void handle(Context ctx, NodeForwarder nodes, Operation operation) throws InterruptedException {
        try {
            var request = authenticate(ctx, nodes);
            if (request.isPresent()) operation.run(ctx, request.get());
        } catch (S3Error e) {
            writeError(ctx, e.status, e.code, e.getMessage());
        } catch (SigV4.Refused e) {
            writeError(ctx, e.code.equals("InvalidRequest") || e.code.equals("AuthorizationHeaderMalformed") ? 400 : 403, e.code, e.getMessage());
        } catch (StasisException e) {
            var mapped = S3Error.from(e);
            writeError(ctx, mapped.status, mapped.code, e.getMessage());
        } catch (IOException | UncheckedIOException e) {
            log.atWarn().addKeyValue("path", ctx.path()).setCause(e).log("S3 request failed");
            writeError(ctx, 400, "IncompleteBody", "the request body could not be read: " + e.getMessage());
        }
    }

    /** The call, checked; empty if it was for a volume of another node, which answered it. */
    private Optional<S3Request> authenticate(Context ctx, NodeForwarder nodes) throws IOException, InterruptedException {
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
        if (nodes.passIfVolumeElsewhere(ctx, volume.id())) return Optional.empty();
        String key = ctx.pathParamMap().containsKey("key") ? ctx.pathParam("key") : "";
        return Optional.of(new S3Request(volume, volumes.hostPath(volume.id()), key, caller, signed));
    }

    // --- what each method means on a bucket and on a key ---

    private void get(Context ctx, S3Request r) throws IOException {
        if (r.key().isEmpty()) listing.list(ctx, r);
        else objects.get(ctx, r);
    }

    private void head(Context ctx, S3Request r) throws IOException {
        objects.head(ctx, r);
    }

    private void put(Context ctx, S3Request r) throws IOException {
        if (r.key().isEmpty()) throw new S3Error(409, "BucketAlreadyOwnedByYou", "volumes are created through POST /v1/volumes");
        String uploadId = ctx.queryParam("uploadId");
        if (uploadId != null && ctx.header("x-amz-copy-source") == null) multipart.uploadPart(ctx, r, uploadId);
        else objects.put(ctx, r);
    }

    private void delete(Context ctx, S3Request r) {
        if (r.key().isEmpty()) throw new S3Error(409, "BucketNotEmpty", "volumes are deleted through DELETE /v1/volumes/{vid}");
        String uploadId = ctx.queryParam("uploadId");
        if (uploadId != null) multipart.abort(r, uploadId);
        else objects.deleteObject(r.root(), r.key());
        ctx.status(204); // S3 answers 204 for a key that was not there too
    }

    private void post(Context ctx, S3Request r) throws IOException {
        if (ctx.queryParamMap().containsKey("delete")) objects.deleteObjects(ctx, r);
        else multipart.post(ctx, r);
    }

    private void writeError(Context ctx, int status, String code, String message) {
        // Up to the largest object: the client, still sending, gets the error instead of a broken pipe.
        RefusedBodies.drain(ctx, maxObjectBytes);
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>");
        S3Xml.tag(xml, "Code", code);
        S3Xml.tag(xml, "Message", message == null ? code : message);
        S3Xml.tag(xml, "Resource", ctx.path());
        S3Xml.tag(xml, "RequestId", String.valueOf(ctx.res().getHeader("X-Request-Id")));
        xml.append("</Error>");
        ctx.attribute(HttpApi.ERROR_WRITTEN, true);
        ctx.status(status).contentType("application/xml");
        if (!ctx.method().name().equals("HEAD")) ctx.result(xml.toString());
    }
}
