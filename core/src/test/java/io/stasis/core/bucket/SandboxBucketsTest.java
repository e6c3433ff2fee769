package io.stasis.core.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.Cidr;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.core.spi.MountedBucket;
import io.stasis.core.spi.OwnedBucketMount;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeMount;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What {@link SandboxBuckets#resolve} accepts and refuses, and how host mount ids name their sandbox. Nothing is mounted. */
class SandboxBucketsTest {
    private static final TenantId TENANT = TenantId.random();
    private static final Map<String, String> SECRETS = Map.of("KEY", "AKIDEXAMPLE:secret/with+chars", "BAD", "no colon at all");

    /** Host mounts that are present but never reached: resolve only checks. */
    private static final BucketMounts UNREACHED = new BucketMounts() {
        public MountedBucket mount(BucketMount spec) {
            throw new AssertionError("resolve mounted " + spec);
        }

        public void unmount(BucketMountId id, Flush flush) {
            throw new AssertionError();
        }

        public int unmountOnceUploaded(BucketMountId id, Duration wait) {
            throw new AssertionError();
        }

        public Optional<MountedBucket> mounted(BucketMountId id) {
            throw new AssertionError();
        }

        public void flush(BucketMountId id) {
            throw new AssertionError();
        }

        public List<String> openFiles(BucketMountId id) {
            throw new AssertionError();
        }

        public List<OwnedBucketMount> listOwned() {
            throw new AssertionError();
        }
    };

    private static final BucketCatalog NO_CATALOG = new BucketCatalog() {
        public void setBuckets(SandboxId sandbox, List<SandboxBucket> buckets) {
            throw new AssertionError();
        }

        public List<SandboxBucket> bucketsOf(SandboxId sandbox) {
            return List.of();
        }
    };

    private final SandboxBuckets buckets = new SandboxBuckets(Optional.of(UNREACHED), NO_CATALOG,
            (tenant, name) -> tenant.equals(TENANT) ? Optional.ofNullable(SECRETS.get(name)) : Optional.empty(),
            endpoints(List.of(Cidr.parse("127.0.0.0/8", "allowed"))), Duration.ofSeconds(10));

    /** Endpoints checked against literal addresses only: the host's resolver and interfaces are the server's. */
    private static BucketEndpoints endpoints(List<Cidr> allowed) {
        return new BucketEndpoints(allowed, Set::of, host -> List.of(InetAddress.ofLiteral(host)));
    }

    private static BucketMountRequest request(String path) {
        return new BucketMountRequest("s3", "http://127.0.0.1:9000", null, "data", "/2026/", path, null, "KEY");
    }

    private StasisException refused(List<BucketMountRequest> requests, List<VolumeMount> volumes) {
        try {
            buckets.resolve(TENANT, requests, volumes);
        } catch (StasisException e) {
            return e;
        }
        throw new AssertionError("accepted " + requests);
    }

    @Test
    void aValidRequestGetsItsDefaults() {
        var resolved = buckets.resolve(TENANT, List.of(request("/data")), List.of());
        assertThat(resolved).containsExactly(new SandboxBucket("/data", URI.create("http://127.0.0.1:9000"), "us-east-1", "data", "2026", false, "KEY"));
    }

    @Test
    void everyRefusalNamesTheFieldOfItsEntry() {
        var volume = new VolumeMount(VolumeId.random(), "/vol", false);
        record Case(BucketMountRequest request, String field) {
        }
        var ok = request("/ok");
        for (var c : List.of(
                new Case(new BucketMountRequest("nfs", ok.endpoint(), null, "data", null, "/x", null, "KEY"), "mounts[1].type"),
                new Case(request("relative"), "mounts[1].path"),
                new Case(request("/ok/below"), "mounts[1].path"),
                new Case(request("/vol/below"), "mounts[1].path"),
                new Case(request("/sys/x"), "mounts[1].path"),
                new Case(new BucketMountRequest("s3", "no url", null, "data", null, "/x", null, "KEY"), "mounts[1].endpoint"),
                new Case(new BucketMountRequest("s3", "http://user@host", null, "data", null, "/x", null, "KEY"), "mounts[1].endpoint"),
                new Case(new BucketMountRequest("s3", "http://169.254.169.254", null, "data", null, "/x", null, "KEY"), "mounts[1].endpoint"),
                new Case(new BucketMountRequest("s3", "http://10.0.0.5:9000", null, "data", null, "/x", null, "KEY"), "mounts[1].endpoint"),
                new Case(new BucketMountRequest("s3", ok.endpoint(), "EU", "data", null, "/x", null, "KEY"), "mounts[1].region"),
                new Case(new BucketMountRequest("s3", ok.endpoint(), null, "Data_1", null, "/x", null, "KEY"), "mounts[1].bucket"),
                new Case(new BucketMountRequest("s3", ok.endpoint(), null, "data", "a/../b", "/x", null, "KEY"), "mounts[1].prefix"),
                new Case(new BucketMountRequest("s3", ok.endpoint(), null, "data", null, "/x", null, null), "mounts[1].credentialsSecret"),
                new Case(new BucketMountRequest("s3", ok.endpoint(), null, "data", null, "/x", null, "MISSING"), "mounts[1].credentialsSecret"),
                new Case(new BucketMountRequest("s3", ok.endpoint(), null, "data", null, "/x", null, "BAD"), "mounts[1].credentialsSecret"))) {
            var e = refused(List.of(ok, c.request()), List.of(volume));
            assertThat(e.code()).as(c.toString()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.details().get("field")).as(c.toString()).isEqualTo(c.field());
            assertThat(e.getMessage()).as(c.toString()).startsWith(c.field() + ": ").doesNotContain("no colon at all").doesNotContain("secret/with");
        }
    }

    @Test
    void anotherTenantsSecretDoesNotExistForThisOne() {
        var e = assertThatThrownBy(() -> buckets.resolve(TenantId.random(), List.of(request("/data")), List.of()));
        e.isInstanceOf(StasisException.class).hasMessageContaining("no secret named 'KEY'");
    }

    @Test
    void withoutHostMountsACreateWithMountsIsRefusedAndOneWithoutIsNot() {
        var none = new SandboxBuckets(Optional.empty(), NO_CATALOG, (t, n) -> Optional.empty(), endpoints(List.of()), Duration.ofSeconds(10));
        assertThat(none.resolve(TENANT, List.of(), List.of())).isEmpty();
        assertThatThrownBy(() -> none.resolve(TENANT, List.of(request("/data")), List.of())).hasMessageContaining("not available on this server");
    }

    @Test
    void aMountIsPinnedToTheAddressesCheckedJustBeforeAndARebindIsRefused() throws Exception {
        // the name's answers change between calls: public at the create, public (another) at the first mount, then loopback
        var answers = new ArrayDeque<>(List.of("203.0.113.7", "198.51.100.9", "127.0.0.1"));
        var rebinding = new BucketEndpoints(List.of(), Set::of, host -> List.of(InetAddress.ofLiteral(answers.poll())));
        var asked = new ArrayList<BucketMount>();
        var host = new BucketMounts() {
            public MountedBucket mount(BucketMount spec) {
                asked.add(spec);
                return new MountedBucket(spec.id(), Path.of("/mnt", spec.id().value()), spec.readOnly());
            }

            public void unmount(BucketMountId id, Flush flush) {
            }

            public int unmountOnceUploaded(BucketMountId id, Duration wait) {
                return 0;
            }

            public Optional<MountedBucket> mounted(BucketMountId id) {
                return Optional.empty();
            }

            public void flush(BucketMountId id) {
            }

            public List<String> openFiles(BucketMountId id) {
                return List.of();
            }

            public List<OwnedBucketMount> listOwned() {
                return List.of();
            }
        };
        var pinning = new SandboxBuckets(Optional.of(host), NO_CATALOG, (tenant, name) -> Optional.ofNullable(SECRETS.get(name)), rebinding, Duration.ofSeconds(10));
        var request = new BucketMountRequest("s3", "https://bucket.example.com", null, "data", null, "/data", null, "KEY");
        var sandbox = SandboxId.random();

        var resolved = pinning.resolve(TENANT, List.of(request), List.of());
        pinning.mount(sandbox, TENANT, resolved);

        assertThat(asked).singleElement().satisfies(spec -> assertThat(spec.addresses()).containsExactly(InetAddress.ofLiteral("198.51.100.9")));
        assertThatThrownBy(() -> pinning.mount(SandboxId.random(), TENANT, resolved)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.getMessage()).contains("resolves to 127.0.0.1, a loopback address");
        });
        assertThat(asked).as("nothing mounted for the rebound name").hasSize(1);
    }

    @Test
    void aHostMountIdNamesItsSandboxAndIndex() {
        var sandbox = SandboxId.random();
        var id = SandboxBucket.mountId(sandbox, 3);
        assertThat(SandboxBuckets.ownerOf(id)).contains(sandbox);
        assertThat(SandboxBuckets.indexOf(id)).isEqualTo(3);
        assertThat(SandboxBuckets.ownerOf(new BucketMountId("something-else"))).isEmpty();
        assertThat(SandboxBuckets.ownerOf(new BucketMountId("sbx_nodash"))).isEmpty();
    }
}
