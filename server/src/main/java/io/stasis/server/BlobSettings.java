package io.stasis.server;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The durable store's part of the service's settings: where checkpoints are copied so that another
 * instance sharing the store can restore them.
 *
 * @param kind            {@code local} (a directory, default {@code <data-dir>/blobs}) or {@code s3}
 * @param dir             the local store's directory, if not the default
 * @param s3Endpoint      the S3-compatible service's base URL (empty: AWS itself)
 * @param s3Bucket        the bucket (required with {@code s3})
 * @param s3Region        the signing region (default us-east-1)
 * @param s3PathStyle     path-style addressing (default true; {@code --s3-path-style false} for virtual hosts)
 * @param s3KeyPrefix     prefix of every key, so instances of separate deployments can share a bucket
 * @param s3CredentialsFile a file with two lines, access key id and secret; otherwise the environment's
 *                        {@code STASIS_S3_ACCESS_KEY_ID} / {@code STASIS_S3_SECRET_ACCESS_KEY}, otherwise the
 *                        AWS SDK's default chain. Never a flag value: flags end up in process lists and logs.
 * @param hibernateDurable whether every hibernation is also copied to the store before it completes
 * @param backgroundUploads whether a checkpoint that did not ask to be durable is uploaded in the background anyway
 *                        ({@code --checkpoint-uploads background}, the default) or only when asked
 *                        ({@code on-request}: {@code durable: true}, or {@code POST /v1/checkpoints/{cid}/sync})
 * @param uploadConcurrency background uploads at once
 * @param gcInterval      how often the store's garbage is collected (default 6h); empty: never on its own
 *                        ({@code POST /v1/blobs/gc} still does)
 * @param gcGrace         what a collection leaves alone however unreferenced: what was written less than this long ago
 *                        (default 1h). Uploads are protected by the store's locks and pins whatever it is; this is a
 *                        second line (and what lets a test collect at once)
 */
public record BlobSettings(String kind, Optional<Path> dir, Optional<URI> s3Endpoint, Optional<String> s3Bucket, String s3Region,
                           boolean s3PathStyle, String s3KeyPrefix, Optional<Path> s3CredentialsFile, boolean hibernateDurable,
                           boolean backgroundUploads, int uploadConcurrency, Optional<Duration> gcInterval,
                           Duration gcGrace) {

    public BlobSettings {
        if (!kind.equals("local") && !kind.equals("s3"))
            throw new IllegalArgumentException("--blob-store must be local or s3, was '" + kind + "'");
        if (uploadConcurrency < 1 || uploadConcurrency > 64)
            throw new IllegalArgumentException("--upload-concurrency must be 1 to 64, was " + uploadConcurrency);
    }

    public static BlobSettings defaults() {
        return new BlobSettings("local", Optional.empty(), Optional.empty(), Optional.empty(), "us-east-1", true, "", Optional.empty(),
                false, true, 2, Optional.of(DEFAULT_GC_INTERVAL), Duration.ofHours(1));
    }

    /** The local store's directory: {@code --blob-dir}, or {@code <data-dir>/blobs}. */
    public Path localDir(Path dataDir) {
        return dir.orElse(dataDir.resolve("blobs"));
    }

    /** Applies one flag; empty if it is not one of these. {@code value} is null for a flag given without one. */
    Optional<BlobSettings> with(String flag, String value) {
        var b = new Builder(this);
        try {
            switch (flag) {
                case "--blob-store" -> b.kind = need(flag, value);
                case "--blob-dir" -> b.dir = Optional.of(Path.of(need(flag, value)).toAbsolutePath());
                case "--s3-endpoint" -> b.s3Endpoint = Optional.of(URI.create(need(flag, value)));
                case "--s3-bucket" -> b.s3Bucket = Optional.of(need(flag, value));
                case "--s3-region" -> b.s3Region = need(flag, value);
                case "--s3-path-style" -> b.s3PathStyle = bool(flag, value);
                case "--s3-key-prefix" -> b.s3KeyPrefix = need(flag, value);
                case "--s3-credentials-file" -> b.s3CredentialsFile = Optional.of(Path.of(need(flag, value)).toAbsolutePath());
                case "--hibernate-durable" -> b.hibernateDurable = bool(flag, value);
                case "--checkpoint-uploads" -> b.backgroundUploads = switch (need(flag, value)) {
                    case "background" -> true;
                    case "on-request" -> false;
                    default -> throw new IllegalArgumentException("must be background or on-request, was '" + value + "'");
                };
                case "--upload-concurrency" -> b.uploadConcurrency = Integer.parseInt(need(flag, value));
                case "--blob-gc-interval" -> b.gcInterval = gcInterval(need(flag, value));
                case "--blob-gc-grace" -> b.gcGrace = ServerConfig.duration(flag, need(flag, value));
                default -> {
                    return Optional.empty();
                }
            }
            return Optional.of(b.build());
        } catch (IllegalArgumentException e) {
            throw new ServerConfig.UsageException(flag + ": " + e.getMessage());
        }
    }

    /** Mutable copy used only while a flag is applied. */
    private static final class Builder {
        String kind;
        Optional<Path> dir;
        Optional<URI> s3Endpoint;
        Optional<String> s3Bucket;
        String s3Region;
        boolean s3PathStyle;
        String s3KeyPrefix;
        Optional<Path> s3CredentialsFile;
        boolean hibernateDurable;
        boolean backgroundUploads;
        int uploadConcurrency;
        Optional<Duration> gcInterval;
        Duration gcGrace;

        Builder(BlobSettings s) {
            kind = s.kind;
            dir = s.dir;
            s3Endpoint = s.s3Endpoint;
            s3Bucket = s.s3Bucket;
            s3Region = s.s3Region;
            s3PathStyle = s.s3PathStyle;
            s3KeyPrefix = s.s3KeyPrefix;
            s3CredentialsFile = s.s3CredentialsFile;
            hibernateDurable = s.hibernateDurable;
            backgroundUploads = s.backgroundUploads;
            uploadConcurrency = s.uploadConcurrency;
            gcInterval = s.gcInterval;
            gcGrace = s.gcGrace;
        }

        BlobSettings build() {
            return new BlobSettings(kind, dir, s3Endpoint, s3Bucket, s3Region, s3PathStyle, s3KeyPrefix, s3CredentialsFile, hibernateDurable,
                    backgroundUploads, uploadConcurrency, gcInterval, gcGrace);
        }
    }

    /** The default of {@code --blob-gc-interval}. */
    static final Duration DEFAULT_GC_INTERVAL = Duration.ofHours(6);

    private static Optional<Duration> gcInterval(String value) {
        if (value.equals("never")) return Optional.empty();
        var interval = ServerConfig.duration("--blob-gc-interval", value);
        if (interval.compareTo(Duration.ofMinutes(1)) < 0) throw new IllegalArgumentException("must be at least 1m or never, was '" + value + "'");
        return Optional.of(interval);
    }

    /** Flags that may stand alone, meaning {@code true}. */
    static boolean isSwitch(String flag) {
        return flag.equals("--hibernate-durable") || flag.equals("--s3-path-style");
    }

    private static String need(String flag, String value) {
        if (value == null) throw new IllegalArgumentException("needs a value");
        return value;
    }

    private static boolean bool(String flag, String value) {
        if (value == null || value.equals("true")) return true;
        if (value.equals("false")) return false;
        throw new IllegalArgumentException("must be true or false, was '" + value + "'");
    }

    /** An access key from the credentials file or the environment; empty for the SDK's default chain. */
    Optional<String[]> s3Credentials() {
        if (s3CredentialsFile.isPresent()) {
            try {
                var lines = Files.readAllLines(s3CredentialsFile.get()).stream().map(String::strip).filter(l -> !l.isEmpty()).toList();
                if (lines.size() < 2) throw new IllegalArgumentException(s3CredentialsFile.get() + " must hold two lines: access key id, then secret");
                return Optional.of(new String[] {lines.get(0), lines.get(1)});
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read --s3-credentials-file " + s3CredentialsFile.get() + ": " + e.getMessage(), e);
            }
        }
        String id = System.getenv("STASIS_S3_ACCESS_KEY_ID");
        String secret = System.getenv("STASIS_S3_SECRET_ACCESS_KEY");
        if (id != null && !id.isBlank() && secret != null && !secret.isEmpty()) return Optional.of(new String[] {id, secret});
        return Optional.empty();
    }

    static final String USAGE = """
              --blob-store local|s3    where checkpoints are made durable (default local)
              --blob-dir DIR           the local store (default <data-dir>/blobs); share it to restore elsewhere
              --s3-endpoint URL        S3-compatible service (default: AWS)
              --s3-bucket NAME         bucket (required with --blob-store s3)
              --s3-region R            signing region (default us-east-1)
              --s3-path-style [B]      path-style URLs (default true)
              --s3-key-prefix P/       prefix of every key (default none)
              --s3-credentials-file F  access key id and secret, one per line (else $STASIS_S3_ACCESS_KEY_ID
                                       and $STASIS_S3_SECRET_ACCESS_KEY, else the AWS default chain)
              --hibernate-durable [B]  also copy every hibernation to the durable store (default false)
              --checkpoint-uploads background|on-request
                                       whether every checkpoint is uploaded in the background (default), or
                                       only those made with durable: true or synced with POST .../sync
              --upload-concurrency N   background checkpoint uploads at once (default 2)
              --blob-gc-interval D     collect the store's garbage this often (default 6h; never: only
                                       through POST /v1/blobs/gc)
              --blob-gc-grace D        a collection spares anything written less than D ago (default 1h)
            """;
}
