package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.testkit.Await;
import io.stasis.testkit.DockerRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Container images imported as templates through the API: an OCI image layout the test builds
 * itself with GNU tar (two layers, a whiteout, owners, a setuid file, the image's Env, WorkingDir,
 * User and Cmd), sandboxes made from it, and the refusals of broken or lying archives and of
 * registries that cannot be reached.
 */
@Tag("root")
class TemplateImportIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration IMPORT_WAIT = Duration.ofMinutes(2);
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterAll
    static void stop() {
        try {
            api.close();
        } finally {
            service.close();
        }
    }

    /** A blob of the layout: its bytes and their digest. */
    private record Blob(String mediaType, byte[] bytes) {
        String hex() {
            try {
                return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        ObjectNode descriptor() {
            return JSON.createObjectNode().put("mediaType", mediaType).put("digest", "sha256:" + hex()).put("size", bytes.length);
        }
    }

    private static byte[] tar(Path dir) throws Exception {
        var process = new ProcessBuilder("tar", "--numeric-owner", "--xattrs", "-c", "-C", dir.toString(), ".").start();
        byte[] bytes = process.getInputStream().readAllBytes();
        assertThat(process.waitFor()).as(new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
        return bytes;
    }

    private static void write(Path root, String path, String content, String mode, int uid) throws IOException {
        Path file = root.resolve(path);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        Files.setAttribute(file, "unix:uid", uid);
        Files.setAttribute(file, "unix:gid", uid);
    }

    /** An image's blobs. */
    private record Image(Blob config, List<Blob> layers, Blob manifest) {
    }

    /** An OCI image layout of {@link #image}. */
    private static byte[] imageLayout(Path work, boolean lie) throws Exception {
        var image = image(work);
        var index = JSON.createObjectNode().put("schemaVersion", 2);
        index.putArray("manifests").add(image.manifest().descriptor());
        Path layout = Files.createDirectories(work.resolve("layout"));
        Files.writeString(layout.resolve("oci-layout"), "{\"imageLayoutVersion\": \"1.0.0\"}");
        Files.write(layout.resolve("index.json"), JSON.writeValueAsBytes(index));
        Path blobs = Files.createDirectories(layout.resolve("blobs/sha256"));
        for (Blob blob : List.of(image.config(), image.manifest(), image.layers().get(0), image.layers().get(1)))
            Files.write(blobs.resolve(blob.hex()), blob.bytes());
        if (lie) Files.write(blobs.resolve(image.layers().get(1).hex()), "not the layer it claims to be".getBytes(StandardCharsets.UTF_8));
        return tar(layout);
    }

    /** Busybox and a minimal /etc in one layer, the app (and a whiteout of the first layer's README) in the next. */
    private static Image image(Path work) throws Exception {
        Path base = Files.createDirectories(work.resolve("layer1"));
        Files.createDirectories(base.resolve("bin"));
        Files.copy(Path.of("/bin/busybox"), base.resolve("bin/busybox"));
        for (String applet : List.of("sh", "cat", "stat", "id", "ls", "echo", "test"))
            Files.createSymbolicLink(base.resolve("bin/" + applet), Path.of("busybox"));
        write(base, "etc/passwd", "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/app:/bin/sh\n", "rw-r--r--", 0);
        write(base, "etc/group", "root:x:0:\napp:x:1000:\n", "rw-r--r--", 0);
        write(base, "etc/hosts", "127.0.0.1 localhost\n", "rw-r--r--", 0);
        write(base, "etc/resolv.conf", "", "rw-r--r--", 0);
        write(base, "README", "hidden by the next layer\n", "rw-r--r--", 0);
        write(base, "usr/bin/pinger", "#!/bin/sh\n", "rwxr-xr-x", 0);
        Files.setAttribute(base.resolve("usr/bin/pinger"), "unix:mode", 04755);
        Path app = Files.createDirectories(work.resolve("layer2"));
        write(app, "app/hello", "hello from the image\n", "rw-r--r--", 1000);
        Files.setAttribute(app.resolve("app"), "unix:uid", 1000);
        Files.setAttribute(app.resolve("app"), "unix:gid", 1000);
        Files.writeString(app.resolve(".wh.README"), "");
        var layers = List.of(new Blob("application/vnd.oci.image.layer.v1.tar", tar(base)),
                new Blob("application/vnd.oci.image.layer.v1.tar", tar(app)));
        var config = JSON.createObjectNode().put("architecture", "amd64").put("os", "linux");
        var settings = config.putObject("config");
        settings.putArray("Env").add("PATH=/bin:/usr/bin").add("GREETING=from-the-image");
        settings.put("WorkingDir", "/app").put("User", "app");
        settings.putArray("Cmd").add("sh");
        var rootfs = config.putObject("rootfs").put("type", "layers");
        var diffIds = rootfs.putArray("diff_ids");
        for (Blob layer : layers) diffIds.add("sha256:" + layer.hex());
        var configBlob = new Blob("application/vnd.oci.image.config.v1+json", JSON.writeValueAsBytes(config));
        var manifest = JSON.createObjectNode().put("schemaVersion", 2).put("mediaType", "application/vnd.oci.image.manifest.v1+json");
        manifest.set("config", configBlob.descriptor());
        var layerList = manifest.putArray("layers");
        for (Blob layer : layers) layerList.add(layer.descriptor());
        return new Image(configBlob, layers, new Blob("application/vnd.oci.image.manifest.v1+json", JSON.writeValueAsBytes(manifest)));
    }

    private static RawApi.Response upload(String name, byte[] body) throws Exception {
        try (var http = HttpClient.newHttpClient()) {
            var response = http.send(HttpRequest.newBuilder(URI.create(service.url + "/v1/templates/import?name=" + name))
                    .header("Authorization", "Bearer " + service.rootKey).header("Content-Type", "application/x-tar")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            return new RawApi.Response(response.statusCode(), JSON.readTree(response.body()));
        }
    }

    private static JsonNode awaitEnd(String name) {
        Await.until("import of " + name, IMPORT_WAIT, () -> !api.get("/v1/templates/" + name).path("build").path("status").asText().equals("building"));
        return api.get("/v1/templates/" + name);
    }

    @Test
    void anImageLayoutBecomesATemplateWithItsFilesOwnersAndSettings(@TempDir Path work) throws Exception {
        var started = upload("imported", imageLayout(work, false));
        assertThat(started.status()).as(started.body().toString()).isEqualTo(202);
        var ready = awaitEnd("imported");
        assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
        assertThat(ready.get("from").asText()).isEqualTo("upload");
        assertThat(ready.get("env").get("GREETING").asText()).isEqualTo("from-the-image");
        assertThat(ready.get("workdir").asText()).isEqualTo("/app");
        assertThat(ready.get("user").asText()).isEqualTo("app");
        assertThat(ready.get("cmd")).extracting(JsonNode::asText).containsExactly("sh");
        assertThat(api.get("/v1/templates/imported/logs").get("output").asText()).contains("2 layer(s)");

        String id = api.post("/v1/sandboxes", "{\"template\": \"imported\"}").get("id").asText();
        assertThat(api.sh(id, "cat /app/hello; echo $GREETING")).isEqualTo("hello from the image\nfrom-the-image\n");
        assertThat(api.sh(id, "stat -c %u:%g /app/hello /app; stat -c %a /usr/bin/pinger")).isEqualTo("1000:1000\n1000:1000\n4755\n");
        assertThat(api.sh(id, "test -e /README && echo there || echo gone")).isEqualTo("gone\n");
        var asApp = api.post("/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"id -u; cat hello\"], \"user\": \"app\", \"cwd\": \"/app\"}");
        assertThat(asApp.get("stdout").asText()).isEqualTo("1000\nhello from the image\n");
        api.call("DELETE", "/v1/sandboxes/" + id, null);

        // The same image again: a new version; a build can go on FROM it.
        assertThat(upload("imported", imageLayout(Files.createDirectories(work.resolve("again")), false)).status()).isEqualTo(202);
        assertThat(awaitEnd("imported").get("version").asText()).isEqualTo("2");
        var built = api.call("POST", "/v1/templates", "{\"name\": \"on-image\", \"from\": \"imported\", \"steps\": [{\"run\": \"echo built > /app/more\"}]}");
        assertThat(built.status()).isEqualTo(202);
        Await.until("build on the image", IMPORT_WAIT, () -> api.get("/v1/templates/on-image").get("status").asText().equals("ready"));
        assertThat(api.call("DELETE", "/v1/templates/on-image", null).status()).isEqualTo(204);
        assertThat(api.call("DELETE", "/v1/templates/imported", null).status()).isEqualTo(204);
    }

    /** The same image from a registry: Debian's docker-registry on loopback, filled through its push API. */
    @Test
    void anImageIsPulledFromARegistry(@TempDir Path work) throws Exception {
        assumeTrue(DockerRegistry.installed(), "./stasis test installs docker-registry");
        try (var registry = DockerRegistry.start(Files.createDirectories(work.resolve("registry")))) {
            var image = image(Files.createDirectories(work.resolve("image")));
            registry.pushBlob("team/app", image.config().bytes());
            for (Blob layer : image.layers()) registry.pushBlob("team/app", layer.bytes());
            registry.pushManifest("team/app", "1.0", image.manifest().mediaType(), image.manifest().bytes());

            String reference = "oci://" + registry.host() + "/team/app:1.0";
            var started = api.call("POST", "/v1/templates", "{\"name\": \"pulled\", \"from\": \"" + reference + "\"}");
            assertThat(started.status()).as(started.body().toString()).isEqualTo(202);
            var ready = awaitEnd("pulled");
            assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
            assertThat(ready.get("from").asText()).isEqualTo(reference);
            assertThat(api.get("/v1/templates/pulled/logs").get("output").asText()).contains("pulling " + reference, "2 layer(s)");
            String id = api.post("/v1/sandboxes", "{\"template\": \"pulled\"}").get("id").asText();
            assertThat(api.sh(id, "cat /app/hello; id -un; pwd")).isEqualTo("hello from the image\napp\n/app\n");
            api.call("DELETE", "/v1/sandboxes/" + id, null);
            var missing = api.call("POST", "/v1/templates", "{\"name\": \"missing\", \"from\": \"oci://" + registry.host() + "/team/none:1\"}");
            assertThat(missing.status()).isEqualTo(202);
            assertThat(awaitEnd("missing").get("build").get("failure").get("message").asText()).contains("team/none");
            assertThat(api.call("DELETE", "/v1/templates/pulled", null).status()).isEqualTo(204);
        }
    }

    @Test
    void theCliImportsAnArchiveAndSaysWhyABrokenOneIsRefused(@TempDir Path work) throws Exception {
        Path archive = Files.write(work.resolve("image.tar"), imageLayout(Files.createDirectories(work.resolve("image")), false));
        var out = new java.io.ByteArrayOutputStream();
        var err = new java.io.ByteArrayOutputStream();
        int code = io.stasis.cli.Main.run(new String[] {"--url", service.url, "template", "import", "cli-image", archive.toString()},
                new java.io.PrintStream(out, true, StandardCharsets.UTF_8), new java.io.PrintStream(err, true, StandardCharsets.UTF_8),
                new java.io.ByteArrayInputStream(new byte[0]), Map.of("STASIS_DATA_DIR", service.dataDir.toString()));
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("cli-image version 1 ready");
        Path garbage = Files.writeString(work.resolve("garbage.tar"), "no archive");
        err.reset();
        code = io.stasis.cli.Main.run(new String[] {"--url", service.url, "template", "import", "cli-bad", garbage.toString()},
                new java.io.PrintStream(out, true, StandardCharsets.UTF_8), new java.io.PrintStream(err, true, StandardCharsets.UTF_8),
                new java.io.ByteArrayInputStream(new byte[0]), Map.of("STASIS_DATA_DIR", service.dataDir.toString()));
        assertThat(code).isEqualTo(6);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("error");
        assertThat(api.call("DELETE", "/v1/templates/cli-image", null).status()).isEqualTo(204);
    }

    @Test
    void brokenOrLyingArchivesAndUnreachableRegistriesAreRefusedClearly(@TempDir Path work) throws Exception {
        var garbage = upload("bad", "this is no tar archive at all, not even close".repeat(20).getBytes(StandardCharsets.UTF_8));
        assertThat(garbage.status()).as(garbage.body().toString()).isBetween(400, 499);
        var lying = upload("lying", imageLayout(work, true));
        assertThat(lying.status()).as(lying.body().toString()).isBetween(400, 499);
        assertThat(lying.body().get("error").get("message").asText()).containsIgnoringCase("sha256");
        assertThat(api.call("GET", "/v1/templates/lying", null).status()).isEqualTo(404);
        assertThat(upload("BadName", new byte[0]).status()).isEqualTo(422);
        var taken = upload("tiny", imageLayout(Files.createDirectories(work.resolve("taken")), false));
        assertThat(taken.status()).isEqualTo(409);
        assertThat(taken.body().get("error").get("code").asText()).isEqualTo("name_taken");

        assertThat(api.call("POST", "/v1/templates", "{\"name\": \"x\", \"from\": \"oci://\"}").status()).isEqualTo(422);
        assertThat(api.call("POST", "/v1/templates", "{\"name\": \"x\", \"from\": \"oci://127.0.0.1:1/none:1\", \"steps\": [{\"run\": \"true\"}]}")
                .status()).isEqualTo(422);
        var unreachable = api.call("POST", "/v1/templates", "{\"name\": \"far\", \"from\": \"oci://127.0.0.1:1/none:1\"}");
        assertThat(unreachable.status()).isEqualTo(202);
        var failed = awaitEnd("far");
        assertThat(failed.get("status").asText()).isEqualTo("failed");
        assertThat(failed.get("build").get("failure").get("message").asText()).contains("127.0.0.1:1");
        assertThat(Files.list(service.dataDir.resolve("image-spool")).toList()).as("spools left").isEmpty();
    }
}
