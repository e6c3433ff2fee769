package io.stasis.core.spi;

import io.stasis.core.error.StasisException;
import java.net.InetAddress;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What to mount: an existing bucket of an S3-compatible service (or a prefix of it), read-write
 * or read-only, with an access key. Every value is checked here and a bad one is named in the
 * message ({@code invalid_request}, field {@code mounts.<name>}). {@link #toString()} shows no
 * secret.
 *
 * @param id          names the mount on the host (its directory); unique among live mounts
 * @param endpoint    the service's base URL, {@code http} or {@code https} with a host and no path,
 *                    query or user info, e.g. {@code https://s3.eu-west-1.amazonaws.com} or
 *                    {@code http://127.0.0.1:9000}; requests are path-style
 *                    ({@code endpoint/bucket/key})
 * @param region      the signing region, e.g. {@code us-east-1} (most S3-compatible servers accept any)
 * @param bucket      the bucket: 3 to 63 lowercase letters, digits, {@code .} or {@code -}; it must
 *                    exist, it is never created
 * @param prefix      only keys under this prefix appear (the prefix itself is not shown): empty for
 *                    the whole bucket, else segments of letters, digits and {@code . _ - = + @ ,}
 *                    joined by single {@code /}, without {@code .} or {@code ..} segments and
 *                    without leading or trailing {@code /}; e.g. {@code datasets/2026}
 * @param readOnly    writes fail with {@code EROFS}, and nothing is ever sent to the bucket but reads
 * @param credentials the access key
 * @param addresses   where the endpoint's host is reached: the addresses it resolved to when it was
 *                    checked, and the only ones the mount connects to (what the name resolves to
 *                    later does not matter); empty: what the host resolves it to at the mount
 */
public record BucketMount(BucketMountId id, URI endpoint, String region, String bucket, String prefix, boolean readOnly,
                          BucketCredentials credentials, List<InetAddress> addresses) {
    /** The region when none is given. */
    public static final String DEFAULT_REGION = "us-east-1";

    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");
    private static final Pattern REGION = Pattern.compile("[a-z0-9-]{1,64}");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._=+@,-]+");
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]");

    public BucketMount {
        Objects.requireNonNull(id, "id");
        checkEndpoint(endpoint);
        if (region == null || !REGION.matcher(region).matches())
            throw StasisException.invalid("mounts.region", "must be 1 to 64 lowercase letters, digits or '-', e.g. us-east-1, was '" + region + "'");
        if (bucket == null || !BUCKET.matcher(bucket).matches())
            throw StasisException.invalid("mounts.bucket", "must be 3 to 63 lowercase letters, digits, '.' or '-', was '" + bucket + "'");
        checkPrefix(prefix);
        Objects.requireNonNull(credentials, "credentials");
        addresses = List.copyOf(addresses);
    }

    /** A read-write mount of a whole bucket in the {@linkplain #DEFAULT_REGION default region}. */
    public static BucketMount of(BucketMountId id, URI endpoint, String bucket, BucketCredentials credentials) {
        return new BucketMount(id, endpoint, DEFAULT_REGION, bucket, "", false, credentials, List.of());
    }

    public BucketMount withPrefix(String prefix) {
        return new BucketMount(id, endpoint, region, bucket, prefix, readOnly, credentials, addresses);
    }

    public BucketMount withReadOnly(boolean readOnly) {
        return new BucketMount(id, endpoint, region, bucket, prefix, readOnly, credentials, addresses);
    }

    public BucketMount withRegion(String region) {
        return new BucketMount(id, endpoint, region, bucket, prefix, readOnly, credentials, addresses);
    }

    /** The mount pinned to {@code addresses} (see the record's parameters). */
    public BucketMount withAddresses(List<InetAddress> addresses) {
        return new BucketMount(id, endpoint, region, bucket, prefix, readOnly, credentials, addresses);
    }

    /** The endpoint's host without the brackets of an IPv6 literal. */
    public String host() {
        return hostOf(endpoint);
    }

    /** {@code endpoint}'s host without the brackets of an IPv6 literal (it must name one). */
    public static String hostOf(URI endpoint) {
        String host = endpoint.getHost();
        return host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    }

    /** The endpoint's port: the URL's, else 80 for http and 443 for https. */
    public int port() {
        return endpoint.getPort() > 0 ? endpoint.getPort() : "https".equals(endpoint.getScheme()) ? 443 : 80;
    }

    /** {@code bucket} or {@code bucket/prefix}: what is mounted, without the endpoint. */
    public String bucketPath() {
        return prefix.isEmpty() ? bucket : bucket + "/" + prefix;
    }

    private static void checkEndpoint(URI endpoint) {
        if (endpoint == null) throw StasisException.invalid("mounts.endpoint", "must be set, e.g. https://s3.amazonaws.com");
        String scheme = endpoint.getScheme();
        boolean ok = ("http".equals(scheme) || "https".equals(scheme)) && endpoint.getHost() != null
                && HOST.matcher(endpoint.getHost()).matches() && endpoint.getRawUserInfo() == null
                && (endpoint.getRawPath() == null || endpoint.getRawPath().isEmpty() || endpoint.getRawPath().equals("/"))
                && endpoint.getRawQuery() == null && endpoint.getRawFragment() == null;
        if (!ok)
            throw StasisException.invalid("mounts.endpoint",
                    "must be an http or https URL with a host and nothing after it (no path, query or user), was '" + endpoint + "'");
    }

    private static void checkPrefix(String prefix) {
        if (prefix == null) throw StasisException.invalid("mounts.prefix", "must not be null (empty for the whole bucket)");
        if (prefix.isEmpty()) return;
        if (prefix.length() > 512) throw StasisException.invalid("mounts.prefix", "must be at most 512 characters");
        for (String segment : prefix.split("/", -1))
            if (!SEGMENT.matcher(segment).matches() || segment.equals(".") || segment.equals(".."))
                throw StasisException.invalid("mounts.prefix", "must be segments of letters, digits and '._=+@,-' joined by single '/'"
                        + " (no '.' or '..' segment, no leading or trailing '/'), was '" + prefix + "'");
    }
}
