package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.testkit.Await;
import io.stasis.testkit.CuttableRelay;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.S3TestServer;
import io.stasis.testkit.SecretSearch;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * S3 buckets mounted into real sandboxes through the API: rclone's FUSE daemon on the host against
 * an in-process s3proxy on loopback that counts what it serves. One service and one S3 server for
 * the class; the restart case runs its own service process on its own data directory.
 */
@Tag("root")
class BucketMountsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CALM = "\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}";
    private static final Duration RELEASE_WAIT = Duration.ofSeconds(2);
    /** Kills of a bucket's daemon that must land during each operation, trials of one operation at once, and trials per kill at most. */
    private static final int DAEMON_KILLS = 20;
    private static final int DAEMON_TRIALS_AT_ONCE = 4;
    private static final int MAX_DAEMON_TRIALS_PER_KILL = 5;
    private static final String KILLED_DURING = "killed during";
    private static ServiceFixture service;
    private static RawApi api;
    private static S3TestServer s3;
    private static String secretValue;
    private static Path blobs;

    @BeforeAll
    static void start() throws Exception {
        s3 = S3TestServer.inMemory();
        blobs = Files.createTempDirectory("stasis-bucket-blobs");
        service = ServiceFixture.start("--blob-dir", blobs.toString(), "--bucket-release-wait", RELEASE_WAIT.toMillis() + "ms");
        api = new RawApi(service.url, service.rootKey);
        secretValue = s3.credentials().accessKeyId() + ":" + s3.credentials().secretAccessKey();
        putSecret(api, "S3_KEY", secretValue);
    }

    @AfterAll
    static void stop() {
        try {
            api.close();
            service.close(); // deletes the sandboxes and checks that no FUSE mount or rclone daemon is left
        } finally {
            s3.close();
            ServiceFixture.deleteTree(blobs);
        }
    }

    private static void putSecret(RawApi to, String name, String value) {
        var body = JSON.createObjectNode().put("name", name).put("value", value);
        to.post("/v1/secrets", body.toString());
    }

    private static String mount(String bucket, String path, String extra) {
        return "{\"type\": \"s3\", \"endpoint\": \"" + s3.endpoint() + "\", \"bucket\": \"" + bucket + "\", \"path\": \"" + path
                + "\", \"credentialsSecret\": \"S3_KEY\"" + extra + "}";
    }

    private static RawApi.Response create(RawApi to, String mountsJson) {
        return create(to, mountsJson, "runc");
    }

    private static RawApi.Response create(RawApi to, String mountsJson, String runtime) {
        return to.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"runtime\": \"" + runtime + "\", \"mounts\": [" + mountsJson + "], "
                + CALM + "}");
    }

    private static RawApi.Response exec(String sandbox, String script) {
        var body = JSON.createObjectNode();
        body.putArray("cmd").add("sh").add("-c").add(script);
        return api.call("POST", "/v1/sandboxes/" + sandbox + "/exec", body.toString());
    }

    private static String text(String bucket, String key) {
        return s3.get(bucket, key).map(b -> new String(b, StandardCharsets.UTF_8)).orElse(null);
    }

    private static Path mountsDir() {
        return service.dataDir.resolve("mounts");
    }

    @Test
    void aBucketIsListedReadAndWrittenBackFromInsideTheSandbox() throws Exception {
        String bucket = s3.newBucket();
        s3.put(bucket, "hello.txt", "hello from s3\n".getBytes(StandardCharsets.UTF_8));
        s3.put(bucket, "datasets/2026/rows.csv", "a,b\n1,2\n".getBytes(StandardCharsets.UTF_8));
        var created = create(api, mount(bucket, "/data", "") + ", " + mount(bucket, "/rows", ", \"prefix\": \"datasets/2026\", \"readOnly\": true"));
        assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
        String id = created.body().get("id").asText();
        try {
            assertThat(api.sh(id, "ls /data")).isEqualTo("datasets\nhello.txt\n");
            assertThat(api.sh(id, "cat /data/hello.txt")).isEqualTo("hello from s3\n");
            // The prefix is the mount's root.
            assertThat(api.sh(id, "ls /rows && cat /rows/rows.csv")).isEqualTo("rows.csv\na,b\n1,2\n");

            // A write goes back to the bucket a moment after its close.
            api.sh(id, "echo written inside > /data/out.txt && mkdir -p /data/sub && echo deeper > /data/sub/x");
            Await.until("the sandbox's writes in the bucket", Duration.ofSeconds(30),
                    () -> "written inside\n".equals(text(bucket, "out.txt")) && "deeper\n".equals(text(bucket, "sub/x")));

            // Read-only: EROFS, and nothing reaches the bucket.
            var refused = exec(id, "echo x > /rows/new.csv");
            assertThat(refused.body().get("exitCode").asInt()).isNotZero();
            assertThat(refused.body().get("stderr").asText()).contains("Read-only file system");
            assertThat(s3.keys(bucket)).doesNotContain("datasets/2026/new.csv");

            // GET shows the mounts with the secret's name, never its value.
            var got = api.get("/v1/sandboxes/" + id);
            assertThat(got.get("mounts")).hasSize(2);
            assertThat(got.get("mounts").get(1).get("prefix").asText()).isEqualTo("datasets/2026");
            assertThat(got.get("mounts").get(1).get("readOnly").asBoolean()).isTrue();
            assertThat(got.get("mounts").get(0).get("credentialsSecret").asText()).isEqualTo("S3_KEY");
            assertThat(got.toString() + created.body()).doesNotContain(s3.credentials().secretAccessKey());

            // Written just before the delete: the delete uploads it before the mount goes.
            api.sh(id, "echo last words > /data/last.txt");
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
        assertThat(text(bucket, "last.txt")).isEqualTo("last words\n");
        assertThat(HostLeaks.mountsUnder(mountsDir())).as("FUSE mounts after the delete").isEmpty();
        assertThat(HostLeaks.processesWorkingUnder(mountsDir())).as("rclone daemons after the delete").isEmpty();
    }

    /** 64 bytes from the middle of a 96 MiB object: s3proxy streams a few MiB (rclone's first chunk), not the object. */
    @Test
    void readingAFewBytesOfALargeObjectDoesNotDownloadIt() {
        String bucket = s3.newBucket();
        long size = 96L << 20;
        s3.put(bucket, "big.bin", new PatternStream(size), size);
        String id = create(api, mount(bucket, "/big", ", \"readOnly\": true")).ok().get("id").asText();
        try {
            long offset = 80L << 20;
            String got = api.sh(id, "dd if=/big/big.bin bs=64 skip=" + (offset / 64) + " count=1 2>/dev/null | od -An -tu1 | head -1");
            assertThat(got.trim().split("\\s+")[0]).isEqualTo(String.valueOf(PatternStream.byteAt(offset)));
            long served = s3.bytesServed(bucket, "big.bin");
            assertThat(served).as("bytes s3proxy sent for a 64-byte read").isPositive().isLessThan(16L << 20);
            System.out.printf("bucket mount: 64 bytes at 80 MiB of a 96 MiB object made s3proxy send %d bytes (ranges %s)%n",
                    served, s3.ranges(bucket, "big.bin"));
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
    }

    /** Bytes of a known pattern, generated as they are read. */
    private static final class PatternStream extends InputStream {
        private final long size;
        private long position;

        PatternStream(long size) {
            this.size = size;
        }

        static int byteAt(long position) {
            return (int) ((position * 31 + (position >>> 20)) & 0xff);
        }

        @Override
        public int read() {
            return position < size ? byteAt(position++) : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (position >= size) return -1;
            int n = (int) Math.min(len, size - position);
            for (int i = 0; i < n; i++) b[off + i] = (byte) byteAt(position++);
            return n;
        }
    }

    @Test
    void theKeyStaysOnTheHost() throws Exception {
        String bucket = s3.newBucket();
        s3.put(bucket, "f", new byte[] {1});
        String id = create(api, mount(bucket, "/data", "")).ok().get("id").asText();
        try {
            String secret = s3.credentials().secretAccessKey();
            // What the sandbox's processes can see of themselves and each other: environment, command lines, mounts.
            String seen = api.sh(id, "env; cat /proc/*/environ /proc/*/cmdline /proc/self/mountinfo /proc/mounts 2>/dev/null | tr '\\0' '\\n'");
            assertThat(seen).contains("/data").doesNotContain(secret);
            // Every file of its root, read from the host.
            assertThat(SecretSearch.filesHolding(service.dataDir.resolve("btrfs/roots").resolve(id), secret)).isEmpty();
            // Nor in the rclone daemon's directory once it is up (the config with the key is deleted), nor on its command line.
            assertThat(SecretSearch.filesHolding(mountsDir(), secret)).isEmpty();
            for (String daemon : HostLeaks.processesWorkingUnder(mountsDir())) {
                String pid = daemon.split(" ")[0];
                assertThat(Files.readString(Path.of("/proc", pid, "cmdline"))).doesNotContain(secret);
                assertThat(new String(Files.readAllBytes(Path.of("/proc", pid, "environ")), StandardCharsets.ISO_8859_1)).doesNotContain(secret);
            }
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
    }

    /**
     * Under gVisor too: its sentry keeps no host file open that the sandbox closed (runsc's
     * {@code --dcache=0} for a sandbox with mounts), so rclone sees the last close and uploads, as
     * under runc. Before that, what a gVisor sandbox wrote never reached the bucket.
     */
    @Test
    void aGvisorSandboxReadsAndWritesItsBucket() {
        ServiceFixture.assumeRuntime("gvisor");
        String bucket = s3.newBucket();
        s3.put(bucket, "hello.txt", "hello from s3\n".getBytes(StandardCharsets.UTF_8));
        var created = create(api, mount(bucket, "/data", ""), "gvisor");
        assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
        String id = created.body().get("id").asText();
        try {
            assertThat(api.sh(id, "cat /data/hello.txt")).isEqualTo("hello from s3\n");
            api.sh(id, "echo written under gvisor > /data/out.txt && mkdir -p /data/sub && echo deeper > /data/sub/x");
            Await.until("the gVisor sandbox's writes in the bucket", Duration.ofSeconds(30),
                    () -> "written under gvisor\n".equals(text(bucket, "out.txt")) && "deeper\n".equals(text(bucket, "sub/x")));
            api.sh(id, "echo last words > /data/last.txt");
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
        assertThat(text(bucket, "last.txt")).as("written just before the delete").isEqualTo("last words\n");
        assertThat(HostLeaks.mountsUnder(mountsDir())).isEmpty();
        assertThat(HostLeaks.processesWorkingUnder(mountsDir())).isEmpty();
    }

    @Test
    void badMountsAreRefusedWithAFieldAndLeaveNothing() {
        String bucket = s3.newBucket();
        putSecret(api, "MALFORMED", "no-colon-here-" + secretValue.replace(":", ""));
        putSecret(api, "WRONG_KEY", s3.credentials().accessKeyId() + ":not-the-key");
        api.post("/v1/volumes", "{\"name\": \"beside\", \"sizeMb\": 32}");
        int before = api.get("/v1/sandboxes").get("items").size();
        record Bad(String mountsJson, String volumesJson, int status, String code, String text) {
        }
        String endpoint = s3.endpoint().toString();
        var cases = List.of(
                new Bad(mount(bucket, "/data", "").replace("\"s3\"", "\"nfs\""), null, 422, "invalid_request", "mounts[0].type"),
                new Bad(mount(bucket, "data", ""), null, 422, "invalid_request", "mounts[0].path"),
                new Bad(mount(bucket, "/proc/x", ""), null, 422, "invalid_request", "mounts[0].path"),
                new Bad(mount(bucket, "/.stasis", ""), null, 422, "invalid_request", "mounts[0].path"),
                new Bad(mount(bucket, "/a", "") + ", " + mount(bucket, "/a/b", ""), null, 422, "invalid_request", "mounts[1].path"),
                new Bad(mount(bucket, "/vol/sub", ""), "[{\"volume\": \"beside\", \"path\": \"/vol\"}]", 422, "invalid_request", "mounts[0].path"),
                new Bad(mount(bucket, "/data", "").replace(endpoint, "not a url"), null, 422, "invalid_request", "mounts[0].endpoint"),
                new Bad(mount(bucket, "/data", "").replace(endpoint, "ftp://127.0.0.1:21"), null, 422, "invalid_request", "mounts[0].endpoint"),
                // The daemon connects from the host: only public addresses and the ranges the service opened (loopback, for these tests).
                new Bad(mount(bucket, "/data", "").replace(endpoint, "http://169.254.169.254"), null, 422, "invalid_request", "mounts[0].endpoint"),
                new Bad(mount(bucket, "/data", "").replace(endpoint, "http://10.0.0.1:9000"), null, 422, "invalid_request", "a private address"),
                new Bad(mount("Bad_Bucket", "/data", ""), null, 422, "invalid_request", "mounts[0].bucket"),
                new Bad(mount(bucket, "/data", ", \"prefix\": \"a/../b\""), null, 422, "invalid_request", "mounts[0].prefix"),
                new Bad(mount(bucket, "/data", "").replace("S3_KEY", "NO_SUCH_SECRET"), null, 422, "invalid_request", "NO_SUCH_SECRET"),
                new Bad(mount(bucket, "/data", "").replace("S3_KEY", "MALFORMED"), null, 422, "invalid_request", "ACCESS_KEY_ID:SECRET_ACCESS_KEY"),
                new Bad(mount(bucket, "/data", "", "unknownField"), null, 422, "invalid_request", "unknownField"),
                // Valid requests the S3 server refuses: nothing is created, the mount is gone again.
                new Bad(mount(bucket, "/data", "").replace("S3_KEY", "WRONG_KEY"), null, 422, "bucket_mount_failed", "mounts[0]"),
                new Bad(mount("no-such-bucket", "/data", ""), null, 422, "bucket_mount_failed", "no-such-bucket"),
                new Bad(mount(bucket, "/data", "").replace(endpoint, "http://127.0.0.1:9"), null, 422, "bucket_mount_failed", "127.0.0.1:9"));
        for (var bad : cases) {
            String body = "{\"template\": \"tiny\", \"mounts\": [" + bad.mountsJson() + "]"
                    + (bad.volumesJson() == null ? "" : ", \"volumes\": " + bad.volumesJson()) + "}";
            var r = api.call("POST", "/v1/sandboxes", body);
            assertThat(r.status()).as(body + " -> " + r.body()).isEqualTo(bad.status());
            assertThat(r.errorCode()).as(body).isEqualTo(bad.code());
            assertThat(r.body().toString()).as(body).contains(bad.text()).doesNotContain(s3.credentials().secretAccessKey())
                    .doesNotContain("not-the-key").doesNotContain("no-colon-here-");
        }
        assertThat(api.get("/v1/sandboxes").get("items").size()).isEqualTo(before);
        assertThat(HostLeaks.mountsUnder(mountsDir())).as("FUSE mounts left by refused creates").isEmpty();
        assertThat(HostLeaks.processesWorkingUnder(mountsDir())).as("rclone daemons left by refused creates").isEmpty();
        api.call("DELETE", "/v1/volumes/beside", null);
    }

    private static String mount(String bucket, String path, String extra, String unknownField) {
        return mount(bucket, path, extra + ", \"" + unknownField + "\": 1");
    }

    @Test
    void pauseHibernateAndResumeKeepTheBucketAndOpenFilesRefuseACheckpoint() {
        String bucket = s3.newBucket();
        s3.put(bucket, "kept.txt", "kept\n".getBytes(StandardCharsets.UTF_8));
        String id = create(api, mount(bucket, "/data", "")).ok().get("id").asText();
        try {
            api.post("/v1/sandboxes/" + id + "/pause", null);
            api.post("/v1/sandboxes/" + id + "/resume", null);
            assertThat(api.sh(id, "cat /data/kept.txt")).isEqualTo("kept\n");

            // A process holding a file open under the mount: CRIU would have to reopen it through a new FUSE mount. Refused.
            long pid = api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"exec sleep 1000 < /data/kept.txt\"]}")
                    .get("pid").asLong();
            Await.until("the file is open", Duration.ofSeconds(10), () -> !api.sh(id, "ls -l /proc/*/fd 2>/dev/null | grep kept.txt || true").isEmpty());
            var hibernate = api.call("POST", "/v1/sandboxes/" + id + "/hibernate", null);
            assertThat(hibernate.status()).as(hibernate.body().toString()).isEqualTo(409);
            assertThat(hibernate.errorCode()).isEqualTo("checkpoint_unsupported");
            assertThat(hibernate.body().path("error").path("message").asText()).contains("/data").contains("kept.txt");
            var checkpoint = api.call("POST", "/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true}");
            assertThat(checkpoint.status()).isEqualTo(409);
            assertThat(checkpoint.errorCode()).isEqualTo("checkpoint_unsupported");
            assertThat(api.get("/v1/sandboxes/" + id).get("state").asText()).isEqualTo("running");
            assertThat(api.sh(id, "cat /data/kept.txt")).isEqualTo("kept\n");
            api.post("/v1/sandboxes/" + id + "/processes/" + pid + "/signal", "{\"signal\": \"KILL\"}");
            Await.until("the file is closed", Duration.ofSeconds(10), () -> api.sh(id, "ls -l /proc/*/fd 2>/dev/null | grep kept.txt || true").isEmpty());

            // Hibernated: no daemon for it; resumed: the bucket is there again, old files readable, new writes uploaded.
            api.sh(id, "echo before sleep > /data/before.txt");
            assertThat(api.post("/v1/sandboxes/" + id + "/hibernate", null).get("state").asText()).isEqualTo("hibernated");
            assertThat(text(bucket, "before.txt")).as("uploaded when the hibernation let go of the mount").isEqualTo("before sleep\n");
            assertThat(HostLeaks.mountsUnder(mountsDir())).as("FUSE mounts of a hibernated sandbox").noneMatch(m -> m.contains(id));
            assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("state").asText()).isEqualTo("running");
            assertThat(api.sh(id, "cat /data/kept.txt /data/before.txt")).isEqualTo("kept\nbefore sleep\n");
            api.sh(id, "echo after > /data/after.txt");
            Await.until("the write after the resume in the bucket", Duration.ofSeconds(30), () -> "after\n".equals(text(bucket, "after.txt")));

            // Stopped and started: mounted again.
            api.post("/v1/sandboxes/" + id + "/stop", null);
            assertThat(HostLeaks.mountsUnder(mountsDir())).noneMatch(m -> m.contains(id));
            api.post("/v1/sandboxes/" + id + "/start", null);
            assertThat(api.sh(id, "cat /data/after.txt")).isEqualTo("after\n");
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
    }

    /** The FUSE daemon of a running sandbox killed: its mount fails (ENOTCONN, ECONNABORTED) until a stop and start mounts it again. */
    /**
     * With the endpoint out of reach, a stop and a delete wait the release wait for the uploads, not
     * minutes; the stopped sandbox shows what is still pending, and once the endpoint is back the
     * files arrive and the mounts go.
     */
    @Test
    void stopAndDeleteDoNotWaitLongForAnEndpointThatIsDownAndTheUploadsFollowLater() throws Exception {
        String bucket = s3.newBucket();
        try (var relay = CuttableRelay.to(s3.endpoint().getPort())) {
            String through = "{\"type\": \"s3\", \"endpoint\": \"http://127.0.0.1:" + relay.port() + "\", \"bucket\": \"" + bucket
                    + "\", \"path\": \"/data\", \"credentialsSecret\": \"S3_KEY\"}";
            String stopped = create(api, through).ok().get("id").asText();
            String deleted = create(api, through).ok().get("id").asText();
            try {
                // written, then the endpoint goes before the write-back (2 s) uploads them
                api.sh(stopped, "echo kept > /data/stopped.txt");
                api.sh(deleted, "echo kept > /data/deleted.txt");
                relay.cut();

                long start = System.nanoTime();
                var afterStop = api.post("/v1/sandboxes/" + stopped + "/stop", null);
                long stopMs = (System.nanoTime() - start) / 1_000_000;
                start = System.nanoTime();
                assertThat(api.call("DELETE", "/v1/sandboxes/" + deleted, null).status()).isEqualTo(204);
                long deleteMs = (System.nanoTime() - start) / 1_000_000;
                System.out.printf("endpoint down: stop %d ms, delete %d ms (release wait %d ms)%n", stopMs, deleteMs, RELEASE_WAIT.toMillis());
                assertThat(Duration.ofMillis(stopMs)).as("stop").isLessThan(RELEASE_WAIT.plusSeconds(8));
                assertThat(Duration.ofMillis(deleteMs)).as("delete").isLessThan(RELEASE_WAIT.plusSeconds(8));
                assertThat(afterStop.get("state").asText()).isEqualTo("stopped");
                assertThat(afterStop.get("mounts").get(0).get("pendingUploads").asInt()).as(afterStop.toString()).isEqualTo(1);
                assertThat(text(bucket, "stopped.txt")).isNull();
                assertThat(HostLeaks.processesWorkingUnder(mountsDir())).as("the daemons upload on")
                        .anyMatch(p -> p.contains(stopped + "-0")).anyMatch(p -> p.contains(deleted + "-0"));

                relay.mend();
                Await.until("both files in the bucket", Duration.ofSeconds(60),
                        () -> "kept\n".equals(text(bucket, "stopped.txt")) && "kept\n".equals(text(bucket, "deleted.txt")));
                Await.until("both mounts gone once their uploads are done", Duration.ofSeconds(30),
                        () -> HostLeaks.processesWorkingUnder(mountsDir()).stream().noneMatch(p -> p.contains(stopped) || p.contains(deleted)));
                // the drain forgets the count once its unmount has returned, a moment after the daemon ended
                Await.until("no uploads pending on the stopped sandbox", Duration.ofSeconds(10),
                        () -> !api.get("/v1/sandboxes/" + stopped).get("mounts").get(0).has("pendingUploads"));
                api.post("/v1/sandboxes/" + stopped + "/start", null);
                assertThat(api.sh(stopped, "cat /data/stopped.txt /data/deleted.txt")).isEqualTo("kept\nkept\n");
            } finally {
                relay.mend();
                api.call("DELETE", "/v1/sandboxes/" + stopped, null);
                api.call("DELETE", "/v1/sandboxes/" + deleted, null);
            }
        }
    }

    /** Each mount's daemon holds its memory in the tenant's quota: a create that fits without it is refused with it. */
    @Test
    void aBucketMountsDaemonCountsInTheTenantsMemoryQuota() {
        var tenant = api.post("/v1/tenants", "{\"name\": \"bucket-quota\", \"quota\": {\"memoryMb\": 300}}");
        var key = api.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}").get("secret").asText();
        try (var tenantApi = new RawApi(service.url, key)) {
            putSecret(tenantApi, "S3_KEY", secretValue);
            String bucket = s3.newBucket();
            String body = "{\"template\": \"tiny\", \"resources\": {\"memoryMb\": 256}, \"mounts\": [" + mount(bucket, "/data", "") + "], " + CALM + "}";
            var refused = tenantApi.call("POST", "/v1/sandboxes", body);
            assertThat(refused.status()).as(refused.body().toString()).isEqualTo(429);
            assertThat(refused.body().get("error").get("code").asText()).isEqualTo("quota_exceeded");
            assertThat(refused.body().get("error").get("message").asText()).contains("memoryMb", (256 + 128) + " more asked");

            String without = "{\"template\": \"tiny\", \"resources\": {\"memoryMb\": 256}, " + CALM + "}";
            String id = tenantApi.post("/v1/sandboxes", without).get("id").asText();
            tenantApi.call("DELETE", "/v1/sandboxes/" + id, null);
        } finally {
            api.call("DELETE", "/v1/tenants/" + tenant.get("id").asText(), null);
        }
        assertThat(HostLeaks.processesWorkingUnder(mountsDir())).as("nothing mounted for the refused create").isEmpty();
    }

    @Test
    void aKilledDaemonIsReplacedByAStopAndStart() {
        String bucket = s3.newBucket();
        String id = create(api, mount(bucket, "/data", "")).ok().get("id").asText();
        try {
            api.sh(id, "echo before > /data/before.txt");
            Await.until("uploaded", Duration.ofSeconds(30), () -> "before\n".equals(text(bucket, "before.txt")));
            var daemon = HostLeaks.processesWorkingUnder(mountsDir()).stream().filter(p -> p.contains(id + "-0")).findFirst().orElseThrow();
            ProcessHandle.of(Long.parseLong(daemon.split(" ")[0])).orElseThrow().destroyForcibly();
            Await.until("the daemon gone", Duration.ofSeconds(10), () -> HostLeaks.processesWorkingUnder(mountsDir()).stream().noneMatch(p -> p.contains(id)));
            var broken = exec(id, "cat /data/before.txt");
            assertThat(broken.body().get("exitCode").asInt()).isNotZero();
            // ENOTCONN, or ECONNABORTED for a call the kernel aborted as the daemon's connection went.
            assertThat(broken.body().get("stderr").asText()).containsAnyOf("not connected", "connection abort");

            api.post("/v1/sandboxes/" + id + "/stop", null);
            api.post("/v1/sandboxes/" + id + "/start", null);
            assertThat(api.sh(id, "cat /data/before.txt")).isEqualTo("before\n");
            api.sh(id, "echo after > /data/after.txt");
            Await.until("a write through the new daemon", Duration.ofSeconds(30), () -> "after\n".equals(text(bucket, "after.txt")));
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
    }

    /**
     * SIGKILL of the rclone daemon at a random moment of each operation that starts, flushes or
     * unmounts it: the sandbox is left in its old or new state, never a 500; what the bucket held
     * (every object uploaded before the operation) stays; where the sandbox is still there, the
     * documented recovery (a stop and a start, or the resume) mounts it again and it reads and
     * writes its bucket; where it is gone, nothing of its mount is left. Each trial has a sandbox and
     * a bucket of its own, so trials run side by side ({@value #DAEMON_TRIALS_AT_ONCE} per operation,
     * every operation at once): most of a trial is waiting for uploads. The trials go on until
     * {@value #DAEMON_KILLS} kills have landed during each operation ({@code -Dstasis.rclone.trials=N}).
     */
    @Test
    void aKilledDaemonMidOperationLeavesTheSandboxDefinedAndTheBucketWhole() throws Exception {
        long seed = Long.getLong("stasis.rclone.seed", System.nanoTime());
        int kills = Integer.getInteger("stasis.rclone.trials", DAEMON_KILLS);
        int atOnce = Integer.getInteger("stasis.rclone.at-once", DAEMON_TRIALS_AT_ONCE);
        var operations = List.of("create", "stop", "start", "hibernate", "resume", "delete");
        var results = Collections.synchronizedList(new ArrayList<String>());
        var failures = Collections.synchronizedList(new ArrayList<String>());
        // Each operation once unkilled, all at once as the trials run: how long it takes bounds the delays.
        var durations = new ConcurrentHashMap<String, Long>();
        forEachAtOnce(operations, 1, (operation, worker) -> {
            var trial = daemonTrial(operation, -1);
            durations.put(operation, Math.max(20_000_000L, trial.nanos()));
            if (!trial.problems().isEmpty()) failures.add(operation + " unkilled: " + trial.problems());
        }).forEach(e -> failures.add("unkilled: " + e));
        assertThat(failures).as("seed " + seed + ": the operations unkilled").isEmpty();
        var landed = new ConcurrentHashMap<String, AtomicInteger>();
        var tried = new ConcurrentHashMap<String, AtomicInteger>();
        var running = new ConcurrentHashMap<String, AtomicInteger>(); // trials under way: none starts that could only land one too many
        operations.forEach(o -> {
            landed.put(o, new AtomicInteger());
            tried.put(o, new AtomicInteger());
            running.put(o, new AtomicInteger());
        });
        forEachAtOnce(operations, atOnce, (operation, worker) -> {
            var random = new Random(seed + 31L * operations.indexOf(operation) + worker);
            while (landed.get(operation).get() < kills) {
                if (landed.get(operation).get() + running.get(operation).incrementAndGet() > kills) {
                    running.get(operation).decrementAndGet();
                    Thread.sleep(50); // one under way may miss: then this worker tries again
                    continue;
                }
                if (tried.get(operation).getAndIncrement() >= kills * MAX_DAEMON_TRIALS_PER_KILL) {
                    running.get(operation).decrementAndGet();
                    break;
                }
                DaemonTrial trial;
                try {
                    trial = daemonTrial(operation, (long) (random.nextDouble() * durations.get(operation) * 1.2));
                    if (trial.killed().equals(KILLED_DURING)) landed.get(operation).incrementAndGet(); // counted before it stops running
                } finally {
                    running.get(operation).decrementAndGet();
                }
                // It answered before the kill, in this long: the next delays aim within that (a stop takes longer in the unkilled round).
                if (!trial.killed().equals(KILLED_DURING)) durations.put(operation, Math.max(20_000_000L, trial.nanos()));
                results.add(operation + " " + trial.killed());
                if (!trial.problems().isEmpty()) failures.add(operation + " from " + trial.from() + ", " + trial.killed() + ": " + trial.problems());
            }
        }).forEach(e -> failures.add(e.toString()));
        System.out.println("BucketMountsIT daemon kills (replay with -Dstasis.rclone.seed=" + seed + "), landed during each operation "
                + landed + " of " + tried + " trials: " + results);
        assertThat(failures).as("seed " + seed).isEmpty();
        assertThat(landed.values()).as("seed " + seed + ": kills that landed during each operation " + landed)
                .allMatch(n -> n.get() >= kills);
        Await.until("nothing of the trials' mounts left", Duration.ofSeconds(30),
                () -> HostLeaks.mountsUnder(mountsDir()).isEmpty() && HostLeaks.processesWorkingUnder(mountsDir()).isEmpty());
    }

    /** Runs {@code work} for each operation on {@code workers} virtual threads each, all at once; what they threw. */
    private static List<Throwable> forEachAtOnce(List<String> operations, int workers, DaemonWork work) {
        var thrown = Collections.synchronizedList(new ArrayList<Throwable>());
        try (var each = Executors.newVirtualThreadPerTaskExecutor()) {
            for (String operation : operations)
                for (int w = 0; w < workers; w++) {
                    int worker = w;
                    each.submit(() -> {
                        try {
                            work.run(operation, worker);
                        } catch (Exception | AssertionError e) {
                            thrown.add(e);
                        }
                    });
                }
        }
        return thrown;
    }

    private interface DaemonWork {
        void run(String operation, int worker) throws Exception;
    }

    /** A trial: where the sandbox started from, whether a kill landed and when, how long the call took, and what went wrong. */
    private record DaemonTrial(String from, String killed, long nanos, List<String> problems) {}

    /**
     * The operation on a sandbox and a bucket of their own, the bucket's daemon killed the first time
     * it is seen {@code delayNanos} after the call starts or later (negative: no kill); if the call
     * ended before one was seen, a daemon found then is killed after it. Then the recovery, the
     * delete, and nothing of the trial's mount may be left.
     */
    private static DaemonTrial daemonTrial(String operation, long delayNanos) throws InterruptedException {
        String bucket = s3.newBucket();
        s3.put(bucket, "before.txt", "before\n".getBytes(StandardCharsets.UTF_8));
        String id = operation.equals("create") ? null : create(api, mount(bucket, "/data", "")).ok().get("id").asText();
        if (id != null) {
            api.sh(id, "echo acked > /data/acked.txt");
            Await.until("the write uploaded", Duration.ofSeconds(30), () -> "acked\n".equals(text(bucket, "acked.txt")));
            if (operation.equals("start")) api.post("/v1/sandboxes/" + id + "/stop", null);
            if (operation.equals("resume")) api.post("/v1/sandboxes/" + id + "/hibernate", null);
        }
        String from = id == null ? "none" : api.get("/v1/sandboxes/" + id).get("state").asText();
        var answer = new AtomicReference<RawApi.Response>();
        String subject = id;
        long start = System.nanoTime();
        var call = Thread.ofVirtual().start(() -> answer.set(switch (operation) {
            case "create" -> create(api, mount(bucket, "/data", ""));
            case "delete" -> api.call("DELETE", "/v1/sandboxes/" + subject, null);
            default -> api.call("POST", "/v1/sandboxes/" + subject + "/" + operation, null);
        }));
        String killed = "not killed";
        if (delayNanos < 0) call.join();
        else {
            while (call.isAlive() && System.nanoTime() < start + delayNanos) Thread.sleep(1);
            boolean during = false;
            while (call.isAlive() && !(during = killDaemonsOf(bucket))) Thread.sleep(2);
            killed = during ? KILLED_DURING : killDaemonsOf(bucket) ? "killed after" : "not killed";
            call.join(Duration.ofSeconds(120));
        }
        long nanos = System.nanoTime() - start;
        var response = answer.get();
        if (id == null && response != null && response.status() == 201) id = response.body().get("id").asText();
        var problems = new ArrayList<String>();
        if (response == null) problems.add("no answer within 120 s");
        else if (response.status() == 500 && response.errorCode().equals("internal")) problems.add("answered 500 internal: " + response.body());
        problems.addAll(recovered(operation, from, id, bucket));
        if (id != null) api.call("DELETE", "/v1/sandboxes/" + id, null);
        String sandbox = id;
        try {
            Await.until("nothing of the trial's mount left", Duration.ofSeconds(30), () -> daemonsOf(bucket).isEmpty()
                    && (sandbox == null || HostLeaks.mountsUnder(mountsDir()).stream().noneMatch(m -> m.contains("/" + sandbox + "-"))));
        } catch (AssertionError e) {
            problems.add("left after the delete: daemons " + daemonsOf(bucket) + ", mounts " + HostLeaks.mountsUnder(mountsDir()));
        }
        return new DaemonTrial(from, killed, nanos, problems);
    }

    /**
     * The bucket's daemon processes (stasis-pin and rclone, named by the bucket on their command
     * line), found in the daemons' memory cgroups, one per mount, under cgroup v1 or v2 as
     * {@code DaemonCgroups} makes them: a few reads, not a scan of /proc.
     */
    private static List<ProcessHandle> daemonsOf(String bucket) {
        var found = new ArrayList<ProcessHandle>();
        Path v1 = Path.of("/sys/fs/cgroup/memory");
        try (var parents = Files.newDirectoryStream(Files.isDirectory(v1) ? v1 : Path.of("/sys/fs/cgroup"), "stasis-buckets-*")) {
            for (Path parent : parents)
                try (var mounts = Files.newDirectoryStream(parent, Files::isDirectory)) {
                    for (Path mount : mounts) {
                        String procs;
                        try {
                            procs = Files.readString(mount.resolve("cgroup.procs"));
                        } catch (IOException e) {
                            continue; // removed meanwhile
                        }
                        procs.lines().filter(l -> !l.isBlank()).map(l -> ProcessHandle.of(Long.parseLong(l.strip())))
                                .flatMap(Optional::stream)
                                .filter(p -> p.info().arguments().map(a -> List.of(a).contains("stasis:" + bucket)).orElse(false))
                                .forEach(found::add);
                    }
                }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    /** SIGKILL of the bucket's daemons; whether there were any. */
    private static boolean killDaemonsOf(String bucket) {
        var daemons = daemonsOf(bucket);
        daemons.forEach(ProcessHandle::destroyForcibly);
        return !daemons.isEmpty();
    }

    /** After a kill during {@code operation}: the state the operation allows, and the sandbox back at work with its bucket. */
    private static List<String> recovered(String operation, String from, String id, String bucket) {
        var problems = new ArrayList<String>();
        if (id == null) return operation.equals("create") ? problems : List.of("the sandbox is gone after " + operation);
        var found = api.call("GET", "/v1/sandboxes/" + id, null);
        if (found.status() == 404) {
            if (!operation.equals("delete")) problems.add("the sandbox is gone after " + operation);
            return problems;
        }
        String state = found.body().get("state").asText();
        var allowed = switch (operation) {
            case "create", "start", "resume" -> List.of("running", from);
            case "stop" -> List.of("running", "stopped");
            case "hibernate" -> List.of("running", "hibernated");
            default -> List.of(from);
        };
        if (!allowed.contains(state)) problems.add("state " + state + " after " + operation + " from " + from);
        // The documented recovery from a dead daemon: a stop and a start (a resume from hibernation mounts afresh).
        if (state.equals("hibernated")) api.call("POST", "/v1/sandboxes/" + id + "/resume", null);
        if (api.get("/v1/sandboxes/" + id).get("state").asText().equals("running")) api.call("POST", "/v1/sandboxes/" + id + "/stop", null);
        var started = api.call("POST", "/v1/sandboxes/" + id + "/start", null);
        if (started.status() != 200) {
            problems.add("the start after it answered " + started.status() + " " + started.body());
            return problems;
        }
        var read = exec(id, "cat /data/before.txt");
        if (read.status() != 200 || !read.body().get("stdout").asText().equals("before\n"))
            problems.add("the bucket after the recovery: " + read.body());
        exec(id, "echo after > /data/after.txt");
        try {
            Await.until("a write after the recovery", Duration.ofSeconds(30), () -> "after\n".equals(text(bucket, "after.txt")));
        } catch (AssertionError e) {
            problems.add("a write after the recovery never reached the bucket");
        }
        if (!operation.equals("create") && !"acked\n".equals(text(bucket, "acked.txt"))) problems.add("the acknowledged object is gone");
        return problems;
    }

    /** A fork mounts the same bucket through a mount of its own: both write, both see the other's objects. */
    @Test
    void aForkGetsItsOwnMountOfTheSameBucket() {
        String bucket = s3.newBucket();
        String parent = create(api, mount(bucket, "/data", "")).ok().get("id").asText();
        String child = null;
        try {
            api.sh(parent, "echo parent > /data/parent.txt");
            var forked = api.post("/v1/sandboxes/" + parent + "/fork", "{}");
            child = forked.get("items").get(0).get("id").asText();
            assertThat(api.get("/v1/sandboxes/" + child).get("mounts").get(0).get("path").asText()).isEqualTo("/data");
            String childId = child;
            assertThat(HostLeaks.mountsUnder(mountsDir())).anyMatch(m -> m.endsWith(parent + "-0")).anyMatch(m -> m.endsWith(childId + "-0"));
            // Written by the parent just before the fork: uploaded by the fork, so the fork's own mount lists it.
            assertThat(api.sh(child, "cat /data/parent.txt")).isEqualTo("parent\n");
            api.sh(child, "echo child > /data/child.txt");
            Await.until("the fork's write in the bucket", Duration.ofSeconds(30), () -> "child\n".equals(text(bucket, "child.txt")));
            Await.until("the parent lists the fork's object", Duration.ofSeconds(30),
                    () -> exec(parent, "cat /data/child.txt").body().path("stdout").asText().equals("child\n"));
            api.call("DELETE", "/v1/sandboxes/" + child, null);
            child = null;
            assertThat(api.sh(parent, "cat /data/parent.txt")).as("the parent's mount is its own").isEqualTo("parent\n");
        } finally {
            if (child != null) api.call("DELETE", "/v1/sandboxes/" + child, null);
            api.call("DELETE", "/v1/sandboxes/" + parent, null);
        }
    }

    /**
     * A durable memory checkpoint restored on another instance sharing the blob store: the
     * descriptor names the buckets and the secret, never the key; the restore mounts them with that
     * instance's secret of the same name, and is refused cleanly while it has none.
     */
    @Test
    void aDurableCheckpointRestoredElsewhereMountsItsBucketsThere() throws Exception {
        String bucket = s3.newBucket();
        s3.put(bucket, "seed.txt", "seed\n".getBytes(StandardCharsets.UTF_8));
        String id = create(api, mount(bucket, "/data", "")).ok().get("id").asText();
        try {
            api.sh(id, "echo state > /root/state && cat /data/seed.txt > /dev/null");
            var made = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true, \"durable\": true}");
            String checkpoint = made.get("id").asText();
            String descriptor = Files.readString(blobs.resolve("checkpoints/" + checkpoint + ".json"));
            assertThat(descriptor).contains("\"credentialsSecret\":\"S3_KEY\"").doesNotContain(s3.credentials().secretAccessKey());
            try (var other = ServiceFixture.start("--blob-dir", blobs.toString()); var otherApi = new RawApi(other.url, other.rootKey)) {
                var refused = otherApi.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + checkpoint + "\"}");
                assertThat(refused.status()).as(refused.body().toString()).isEqualTo(422);
                assertThat(refused.body().toString()).contains("mounts[0].credentialsSecret").contains("S3_KEY");
                assertThat(otherApi.get("/v1/sandboxes").get("items")).isEmpty();
                assertThat(HostLeaks.mountsUnder(other.dataDir.resolve("mounts"))).isEmpty();

                putSecret(otherApi, "S3_KEY", secretValue);
                var restored = otherApi.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + checkpoint + "\"}");
                assertThat(restored.status()).as(restored.body().toString()).isEqualTo(201);
                String back = restored.body().get("id").asText();
                assertThat(restored.body().get("mounts").get(0).get("path").asText()).isEqualTo("/data");
                assertThat(otherApi.sh(back, "cat /root/state /data/seed.txt")).isEqualTo("state\nseed\n");
                otherApi.sh(back, "echo from elsewhere > /data/elsewhere.txt");
                Await.until("the restored sandbox's write in the bucket", Duration.ofSeconds(30),
                        () -> "from elsewhere\n".equals(text(bucket, "elsewhere.txt")));
            } // closing deletes the restored sandbox and checks that no mount or daemon is left there
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
    }

    /**
     * The service killed in the middle of deleting one sandbox: started again, the other sandbox's
     * bucket works as before (its daemon outlived the service), the deleted one's mount is removed,
     * and the key is in no log.
     */
    @Test
    void aRestartKeepsMountsOfLiveSandboxesAndRemovesTheOthers() throws Exception {
        String bucket = s3.newBucket();
        Path dataDir = Files.createTempDirectory("stasis-bucket-restart-it");
        Path log = Path.of("target", "bucket-mounts-restart-it-service.log").toAbsolutePath();
        Files.deleteIfExists(log);
        String kept;
        String deleted;
        try {
            try (var first = ServiceProcess.start(dataDir, log, Map.of("STASIS_FAULT_POINT", "delete.after-destroy"));
                 var firstApi = new RawApi(first.url, Files.readString(dataDir.resolve("root.key")).strip())) {
                putSecret(firstApi, "S3_KEY", secretValue);
                kept = create(firstApi, mount(bucket, "/data", "")).ok().get("id").asText();
                deleted = create(firstApi, mount(bucket, "/gone", "")).ok().get("id").asText();
                firstApi.sh(kept, "echo one > /data/one.txt");
                try {
                    firstApi.call("DELETE", "/v1/sandboxes/" + deleted, null); // the service dies after destroying it, before its mount goes
                } catch (UncheckedIOException expected) {
                    // no answer: it died while answering
                }
                assertThat(first.awaitDeath(Duration.ofSeconds(60))).as("the service died at the fault point").isTrue();
            }
            Path mounts = dataDir.resolve("mounts");
            assertThat(HostLeaks.mountsUnder(mounts)).as("both mounts outlive the service").hasSize(2);
            try (var second = ServiceProcess.start(dataDir, log, Map.of());
                 var secondApi = new RawApi(second.url, Files.readString(dataDir.resolve("root.key")).strip())) {
                try {
                    assertThat(HostLeaks.mountsUnder(mounts)).as("only the live sandbox's mount").hasSize(1).allMatch(m -> m.endsWith(kept + "-0"));
                    assertThat(HostLeaks.processesWorkingUnder(mounts)).hasSize(1);
                    assertThat(secondApi.sh(kept, "cat /data/one.txt")).isEqualTo("one\n");
                    secondApi.sh(kept, "echo two > /data/two.txt");
                    Await.until("a write after the restart in the bucket", Duration.ofSeconds(30), () -> "two\n".equals(text(bucket, "two.txt")));
                } finally {
                    secondApi.call("DELETE", "/v1/sandboxes/" + kept, null);
                }
            }
            assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
            assertThat(HostLeaks.processesWorkingUnder(dataDir)).isEmpty();
            assertThat(Files.readString(log)).as("the service's log").contains(kept).doesNotContain(s3.credentials().secretAccessKey());
        } catch (Throwable failed) {
            // A last start deletes what is left (sandboxes, their buckets) and its orderly stop unmounts the pool.
            try (var last = ServiceProcess.start(dataDir, log, Map.of());
                 var lastApi = new RawApi(last.url, Files.readString(dataDir.resolve("root.key")).strip())) {
                for (JsonNode s : lastApi.get("/v1/sandboxes").get("items")) lastApi.call("DELETE", "/v1/sandboxes/" + s.get("id").asText(), null);
            } catch (Exception cleanup) {
                failed.addSuppressed(cleanup);
            }
            throw failed;
        } finally {
            ServiceFixture.deleteTree(dataDir);
        }
    }
}
