package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.testkit.Await;
import io.stasis.testkit.HostLeaks;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Volumes end to end through the REST API, in real sandboxes: lifecycle, mounts, sharing, POSIX, snapshots. */
@Tag("root")
class VolumesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() {
        try {
            for (JsonNode v : api.get("/v1/volumes").get("items")) api.call("DELETE", "/v1/volumes/" + v.get("id").asText() + "?force=true", null);
        } finally {
            api.close();
            service.close();
        }
    }

    private static String sandbox(String template, String volumesJson) {
        return sandbox("runc", template, volumesJson);
    }

    private static String sandbox(String runtime, String template, String volumesJson) {
        ServiceFixture.assumeRuntime(runtime);
        return api.post("/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"template\": \"" + template + "\", \"volumes\": " + volumesJson
                + ", \"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
    }

    private static RawApi.Response exec(String sandbox, String... argv) {
        var body = JSON.createObjectNode();
        var cmd = body.putArray("cmd");
        for (String a : argv) cmd.add(a);
        return api.call("POST", "/v1/sandboxes/" + sandbox + "/exec", body.toString());
    }

    @Test
    void aVolumeOutlivesItsSandboxesAndCannotBeDeletedWhileMountedUnlessForced() {
        var volume = api.post("/v1/volumes", "{\"name\": \"keep\", \"sizeMb\": 64}");
        String vid = volume.get("id").asText();
        assertThat(vid).startsWith("vol_");
        assertThat(volume.get("sizeMb").asLong()).isEqualTo(64);
        assertThat(api.get("/v1/volumes/keep").get("id").asText()).isEqualTo(vid);
        assertThat(api.get("/v1/volumes").get("items")).extracting(v -> v.get("id").asText()).contains(vid);
        assertThat(api.call("POST", "/v1/volumes", "{\"name\": \"keep\"}").status()).isEqualTo(409);

        String first = sandbox("tiny", "[{\"volume\": \"keep\", \"path\": \"/data\"}]");
        assertThat(api.sh(first, "echo hello > /data/greeting && stat -c %u /data && cat /data/greeting")).isEqualTo("0\nhello\n");
        assertThat(api.get("/v1/volumes/" + vid).get("mountedBy").get(0).get("sandboxId").asText()).isEqualTo(first);
        var refused = api.call("DELETE", "/v1/volumes/" + vid, null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.errorCode()).isEqualTo("invalid_state");
        api.call("DELETE", "/v1/sandboxes/" + first, null);

        // The files stay with the volume; a second sandbox mounts it read-only and cannot write.
        String second = sandbox("tiny", "[{\"volume\": \"" + vid + "\", \"path\": \"/mnt/in\", \"readOnly\": true}]");
        assertThat(api.sh(second, "cat /mnt/in/greeting")).isEqualTo("hello\n");
        var write = exec(second, "sh", "-c", "echo x > /mnt/in/other");
        assertThat(write.body().get("exitCode").asInt()).isNotZero();
        assertThat(write.body().get("stderr").asText()).contains("Read-only file system");

        // Forced: the sandbox that mounts it is stopped and loses the mount; then it starts without it.
        assertThat(api.call("DELETE", "/v1/volumes/" + vid + "?force=true", null).status()).isEqualTo(204);
        assertThat(api.get("/v1/sandboxes/" + second).get("state").asText()).isEqualTo("stopped");
        assertThat(api.call("GET", "/v1/volumes/" + vid, null).errorCode()).isEqualTo("volume_not_found");
        api.post("/v1/sandboxes/" + second + "/start", null);
        assertThat(api.sh(second, "ls /mnt/in 2>/dev/null | wc -l").strip()).isEqualTo("0");
        api.call("DELETE", "/v1/sandboxes/" + second, null);
    }

    @Test
    void mountPathsAndVolumesAreChecked() {
        api.post("/v1/volumes", "{\"name\": \"paths\", \"sizeMb\": 32}");
        for (String path : new String[] {"data", "/", "/proc/x", "/dev", "/sys/fs", "/.stasis/bin", "/a/../etc", "/a//b", "/etc/resolv.conf"}) {
            var r = api.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"volumes\": [{\"volume\": \"paths\", \"path\": \"" + path + "\"}]}");
            assertThat(r.status()).as(path).isEqualTo(422);
            assertThat(r.body().toString()).as(path).contains("volumes[0].path");
        }
        var overlap = api.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"volumes\": [{\"volume\": \"paths\", \"path\": \"/a\"},"
                + " {\"volume\": \"paths\", \"path\": \"/a/b\"}]}");
        assertThat(overlap.status()).isEqualTo(422);
        var missing = api.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"volumes\": [{\"volume\": \"nope\", \"path\": \"/a\"}]}");
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.errorCode()).isEqualTo("volume_not_found");
        assertThat(api.call("POST", "/v1/volumes", "{\"name\": \"tiny-size\", \"sizeMb\": 1}").status()).isEqualTo(422);
        assertThat(api.call("POST", "/v1/volumes", "{\"name\": \"Bad Name\"}").status()).isEqualTo(422);
        assertThat(api.call("DELETE", "/v1/volumes/paths", null).status()).isEqualTo(204);
    }

    /** Read-write by many: every sandbox sees the others' writes at once; flock is enforced across sandboxes too. */
    @EachRuntime
    void manySandboxesShareOneVolumeReadWrite(String runtime) {
        api.post("/v1/volumes", "{\"name\": \"shared\", \"sizeMb\": 64}");
        String a = sandbox(runtime, "base", "[{\"volume\": \"shared\", \"path\": \"/shared\"}]");
        String b = sandbox(runtime, "base", "[{\"volume\": \"shared\", \"path\": \"/work/shared\"}]");
        try {
            api.sh(a, "echo from-a > /shared/a");
            assertThat(api.sh(b, "cat /work/shared/a")).isEqualTo("from-a\n");
            api.sh(b, "echo from-b > /work/shared/a");
            assertThat(api.sh(a, "cat /shared/a")).isEqualTo("from-b\n");
            // A holds an exclusive flock in a background process; B cannot take it meanwhile.
            api.post("/v1/sandboxes/" + a + "/processes", "{\"cmd\": [\"python3\", \"-c\", \"import fcntl,time; f=open('/shared/lock','w');"
                    + " fcntl.flock(f, fcntl.LOCK_EX); open('/shared/locked','w').close(); time.sleep(30)\"]}");
            Await.until("lock held", Duration.ofSeconds(20), () -> api.sh(b, "ls /work/shared").contains("locked"));
            String tryLock = "import fcntl\nf=open('/work/shared/lock','w')\ntry:\n  fcntl.flock(f, fcntl.LOCK_EX|fcntl.LOCK_NB); print('got')\n"
                    + "except BlockingIOError: print('busy')\n";
            if (runtime.equals("gvisor")) {
                // gVisor's kernel keeps file locks to itself: they hold among one sandbox's processes, not
                // across sandboxes (docs/API.md); its checkpoint keeps them, so A hibernates with one held.
                assertThat(exec(b, "python3", "-c", tryLock).ok().get("stdout").asText()).isEqualTo("got\n");
                assertThat(api.post("/v1/sandboxes/" + a + "/hibernate", null).get("state").asText()).isEqualTo("hibernated");
                assertThat(exec(a, "python3", "-c", tryLock.replace("/work/shared", "/shared")).ok().get("stdout").asText())
                        .as("the lock is held again after the resume").isEqualTo("busy\n");
                return;
            }
            assertThat(exec(b, "python3", "-c", tryLock).ok().get("stdout").asText()).isEqualTo("busy\n");
            // CRIU is not asked to dump file locks: while one is held, A cannot be hibernated, and it keeps running.
            var hibernate = api.call("POST", "/v1/sandboxes/" + a + "/hibernate", null);
            assertThat(hibernate.status()).isEqualTo(409);
            assertThat(hibernate.errorCode()).isEqualTo("checkpoint_unsupported");
            assertThat(hibernate.body().path("error").path("message").asText()).contains("file lock");
            assertThat(api.get("/v1/sandboxes/" + a).get("state").asText()).isEqualTo("running");
            assertThat(api.sh(a, "ls /shared")).contains("locked");
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + a, null);
            api.call("DELETE", "/v1/sandboxes/" + b, null);
            api.call("DELETE", "/v1/volumes/shared", null);
        }
    }

    /** Real POSIX inside a volume, in a real sandbox: atomic rename, random writes, flock, fsync, and the size limit. */
    @EachRuntime
    void posixSemanticsInsideASandbox(String runtime) {
        api.post("/v1/volumes", "{\"name\": \"posix\", \"sizeMb\": 64}");
        String id = sandbox(runtime, "base", "[{\"volume\": \"posix\", \"path\": \"/vol\"}]");
        try {
            String script = """
                    import os, errno, random, fcntl, multiprocessing, sys
                    d = '/vol'
                    # Atomic rename: a reader racing 300 replacements only ever sees whole versions.
                    def writer():
                        for i in range(300):
                            tmp = d + '/cfg.tmp'
                            with open(tmp, 'w') as f:
                                f.write(('v%03d' % i) * 4096); f.flush(); os.fsync(f.fileno())
                            os.rename(tmp, d + '/cfg')
                    with open(d + '/cfg', 'w') as f: f.write('v---' * 4096)
                    w = multiprocessing.Process(target=writer); w.start()
                    reads = 0
                    while w.is_alive() or reads == 0:
                        c = open(d + '/cfg').read()
                        assert len(c) == 4 * 4096 and c == c[:4] * 4096, 'torn read'
                        reads += 1
                    w.join(); assert w.exitcode == 0
                    print('rename ok', reads > 0)
                    # Random writes: pwrite at random offsets, checked against a model, also after reopening.
                    size = 1 << 20
                    model = bytearray(size)
                    fd = os.open(d + '/random', os.O_RDWR | os.O_CREAT, 0o644)
                    os.ftruncate(fd, size)
                    rnd = random.Random(7)
                    for _ in range(2000):
                        off = rnd.randrange(size - 512); data = os.urandom(rnd.randrange(1, 512))
                        os.pwrite(fd, data, off); model[off:off + len(data)] = data
                    os.fsync(fd); os.close(fd)
                    assert open(d + '/random', 'rb').read() == bytes(model)
                    print('random ok')
                    # fsync of a file and of the directory.
                    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY); os.fsync(dfd); os.close(dfd)
                    print('fsync ok')
                    # flock within the sandbox: 4 processes each add 250 to a counter under an exclusive lock.
                    with open(d + '/counter', 'w') as f: f.write('0')
                    def add():
                        for _ in range(250):
                            with open(d + '/counter', 'r+') as f:
                                fcntl.flock(f, fcntl.LOCK_EX)
                                n = int(f.read()); f.seek(0); f.write(str(n + 1)); f.truncate(); f.flush()
                                fcntl.flock(f, fcntl.LOCK_UN)
                    ps = [multiprocessing.Process(target=add) for _ in range(4)]
                    [p.start() for p in ps]; [p.join() for p in ps]
                    print('flock', open(d + '/counter').read())
                    # Past the size: EDQUOT (or ENOSPC), and deleting makes room again.
                    try:
                        with open(d + '/big', 'wb') as f:
                            for _ in range(100):
                                f.write(b'x' * (1 << 20)); f.flush(); os.fsync(f.fileno())
                        print('no error')
                    except OSError as e:
                        print('full', errno.errorcode[e.errno])
                    os.remove(d + '/big')
                    with open(d + '/after', 'wb') as f: f.write(b'y' * (8 << 20)); os.fsync(f.fileno())
                    print('room again')
                    """;
            var result = exec(id, "python3", "-c", script).ok();
            assertThat(result.get("exitCode").asInt()).as(result.get("stderr").asText()).isZero();
            assertThat(result.get("stdout").asText()).contains("rename ok True\n", "random ok\n", "fsync ok\n", "flock 1000\n", "room again\n")
                    .containsPattern("full (EDQUOT|ENOSPC)\n");
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
            api.call("DELETE", "/v1/volumes/posix", null);
        }
    }

    /** Pause, hibernate and resume keep the mount and an open file on it; a fork mounts the same volume. */
    @EachRuntime
    void volumesSurviveHibernationAndForksMountTheSameVolume(String runtime) {
        api.post("/v1/volumes", "{\"name\": \"live\", \"sizeMb\": 64}");
        String id = sandbox(runtime, "tiny", "[{\"volume\": \"live\", \"path\": \"/live\"}, {\"volume\": \"live\", \"path\": \"/view\", \"readOnly\": true}]");
        try {
            // A process keeps a file of the volume open across the hibernation.
            api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"exec 3>>/live/ticks; while true; do echo t >&3; sleep 0.05; done\"]}");
            Await.until("ticks", Duration.ofSeconds(10), () -> !api.sh(id, "cat /live/ticks 2>/dev/null").isEmpty());
            assertThat(api.post("/v1/sandboxes/" + id + "/pause", null).get("state").asText()).isEqualTo("paused");
            assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("state").asText()).isEqualTo("running");
            assertThat(api.post("/v1/sandboxes/" + id + "/hibernate", null).get("state").asText()).isEqualTo("hibernated");
            assertThat(HostLeaks.processesOf(Set.of(new SandboxId(id)))).isEmpty();
            long before = Long.parseLong(api.sh(id, "wc -l < /live/ticks").strip()); // auto-resume
            Await.until("ticks after resume", Duration.ofSeconds(10),
                    () -> Long.parseLong(api.sh(id, "wc -l < /view/ticks").strip()) > before);
            var ro = exec(id, "sh", "-c", "echo x > /view/nope");
            assertThat(ro.body().get("exitCode").asInt()).as("the read-only mount stays read-only after a restore").isNotZero();

            var checkpoint = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true}");
            String fork = api.post("/v1/sandboxes/" + id + "/fork", "{\"checkpoint\": \"" + checkpoint.get("id").asText() + "\"}")
                    .get("items").get(0).get("id").asText();
            try {
                api.sh(fork, "echo from-fork > /live/fork-note");
                assertThat(api.sh(id, "cat /live/fork-note")).isEqualTo("from-fork\n");
                var mounters = api.get("/v1/volumes/live").get("mountedBy");
                assertThat(mounters).extracting(m -> m.get("sandboxId").asText()).contains(id, fork);
                // The fork's own hibernation and resume keep its mounts too.
                api.post("/v1/sandboxes/" + fork + "/hibernate", null);
                assertThat(api.post("/v1/sandboxes/" + fork + "/resume", null).get("state").asText()).isEqualTo("running");
                assertThat(api.sh(fork, "cat /live/fork-note")).isEqualTo("from-fork\n");
            } finally {
                api.call("DELETE", "/v1/sandboxes/" + fork, null);
            }
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
            api.call("DELETE", "/v1/volumes/live", null);
        }
    }

    /** Snapshots are read-only points in time; a volume branched from one holds what it held. */
    @Test
    void snapshotsAndBranches() {
        String vid = api.post("/v1/volumes", "{\"name\": \"snap\", \"sizeMb\": 64}").get("id").asText();
        String id = sandbox("tiny", "[{\"volume\": \"snap\", \"path\": \"/s\"}]");
        try {
            api.sh(id, "echo one > /s/f");
            long start = System.nanoTime();
            var snapshot = api.post("/v1/volumes/snap/snapshots", null);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(snapshot.get("id").asText()).startsWith("vsnap_");
            assertThat(ms).as("a snapshot is O(1)").isLessThan(2000);
            api.sh(id, "echo two > /s/f");
            assertThat(api.get("/v1/volumes/snap/snapshots").get("items")).hasSize(1);
            var branch = api.post("/v1/volumes", "{\"name\": \"snap-branch\", \"fromSnapshot\": \"" + snapshot.get("id").asText() + "\"}");
            assertThat(branch.get("origin").asText()).isEqualTo(snapshot.get("id").asText());
            assertThat(branch.get("sizeMb").asLong()).isEqualTo(64);
            String reader = sandbox("tiny", "[{\"volume\": \"snap-branch\", \"path\": \"/b\"}]");
            try {
                assertThat(api.sh(reader, "cat /b/f")).isEqualTo("one\n");
                api.sh(reader, "echo three > /b/f");
                assertThat(api.sh(id, "cat /s/f")).isEqualTo("two\n");
            } finally {
                api.call("DELETE", "/v1/sandboxes/" + reader, null);
            }
            assertThat(api.call("DELETE", "/v1/volumes/snap/snapshots/" + snapshot.get("id").asText(), null).status()).isEqualTo(204);
            assertThat(api.get("/v1/volumes/snap/snapshots").get("items")).isEmpty();
            assertThat(api.call("DELETE", "/v1/volumes/snap-branch", null).status()).isEqualTo(204);
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + id, null);
            api.call("DELETE", "/v1/volumes/" + vid, null);
        }
    }
}
