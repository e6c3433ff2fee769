package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * An existing S3-compatible bucket (or a prefix of it) mounted into a new sandbox at {@code path}:
 * the sandbox sees files, fetched lazily; files it writes are uploaded a moment after they are
 * closed. The key stays on the server: {@code credentialsSecret} names one of the tenant's secrets
 * ({@link StasisClient#secrets()}) whose value is {@code ACCESS_KEY_ID:SECRET_ACCESS_KEY}.
 *
 * <pre>{@code
 * client.secrets().put("DATA_KEY", accessKeyId + ":" + secretAccessKey);
 * var sandbox = client.sandboxes().create(CreateSandboxRequest.builder()
 *         .mount(BucketMount.s3("https://s3.eu-west-1.amazonaws.com", "datasets", "/data", "DATA_KEY").withPrefix("2026").asReadOnly())
 *         .build());
 * }</pre>
 *
 * @param type              {@code s3}, the only kind so far
 * @param endpoint          the service's base URL ({@code http} or {@code https}, no path)
 * @param region            the signing region, or null for {@code us-east-1}
 * @param bucket            an existing bucket
 * @param prefix            only keys under it appear, or null for the whole bucket
 * @param path              the absolute path inside the sandbox
 * @param readOnly          writes fail with {@code EROFS}
 * @param credentialsSecret the secret holding the key
 */
@com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_NULL)
public record BucketMount(String type, String endpoint, String region, String bucket, String prefix, String path, boolean readOnly,
                          String credentialsSecret) {
    public BucketMount {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(bucket, "bucket");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(credentialsSecret, "credentialsSecret");
    }

    /** A read-write mount of the whole bucket. */
    public static BucketMount s3(String endpoint, String bucket, String path, String credentialsSecret) {
        return new BucketMount("s3", endpoint, null, bucket, null, path, false, credentialsSecret);
    }

    public BucketMount withPrefix(String prefix) {
        return new BucketMount(type, endpoint, region, bucket, prefix, path, readOnly, credentialsSecret);
    }

    public BucketMount withRegion(String region) {
        return new BucketMount(type, endpoint, region, bucket, prefix, path, readOnly, credentialsSecret);
    }

    public BucketMount asReadOnly() {
        return new BucketMount(type, endpoint, region, bucket, prefix, path, true, credentialsSecret);
    }

    /**
     * Parses the CLI's {@code --mount}: comma-separated {@code key=value} pairs ({@code endpoint},
     * {@code bucket}, {@code path}, {@code secret}; optional {@code prefix}, {@code region},
     * {@code type}) and the flag {@code ro}, e.g.
     * {@code endpoint=http://127.0.0.1:9000,bucket=data,prefix=2026,path=/data,secret=DATA_KEY,ro}.
     * A value with a comma is quoted, as in Docker's {@code --mount}: {@code prefix="runs,2026"} or
     * {@code "prefix=runs,2026"} (a quote inside quotes is doubled: {@code ""}).
     */
    public static BucketMount parse(String spec) {
        var values = new LinkedHashMap<String, String>();
        boolean readOnly = false;
        for (String part : fields(spec)) {
            if (part.equals("ro")) {
                readOnly = true;
                continue;
            }
            int eq = part.indexOf('=');
            String key = eq < 0 ? part : part.substring(0, eq);
            if (eq <= 0 || !Set.of("type", "endpoint", "region", "bucket", "prefix", "path", "secret").contains(key)
                    || values.put(key, part.substring(eq + 1)) != null)
                throw new IllegalArgumentException("a bucket mount is endpoint=URL,bucket=NAME,path=/PATH,secret=SECRET[,prefix=P][,region=R][,ro]"
                        + " (each key once), was '" + spec + "'");
        }
        for (String required : new String[] {"endpoint", "bucket", "path", "secret"})
            if (!values.containsKey(required))
                throw new IllegalArgumentException("a bucket mount needs " + required + "=..., was '" + spec + "'");
        return new BucketMount(values.getOrDefault("type", "s3"), values.get("endpoint"), values.get("region"), values.get("bucket"),
                values.get("prefix"), values.get("path"), readOnly, values.get("secret"));
    }

    /** The comma-separated fields of {@code spec}, a quoted stretch kept whole with its quotes taken off ({@code ""} inside: a quote). */
    static List<String> fields(String spec) {
        var fields = new ArrayList<String>();
        var field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < spec.length(); i++) {
            char c = spec.charAt(i);
            if (c == '"' && quoted && i + 1 < spec.length() && spec.charAt(i + 1) == '"') {
                field.append('"');
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                fields.add(field.toString());
                field.setLength(0);
            } else {
                field.append(c);
            }
        }
        if (quoted) throw new IllegalArgumentException("a bucket mount has a quote that is not closed: '" + spec + "'");
        fields.add(field.toString());
        return fields;
    }
}
