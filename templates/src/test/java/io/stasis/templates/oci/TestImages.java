package io.stasis.templates.oci;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.luben.zstd.ZstdOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

/**
 * Builds images in memory for the tests: layers, configs, manifests and indexes as the OCI and
 * Docker specs lay them out, and the two archive kinds that carry them (an OCI image layout, a
 * docker-archive as {@code docker save} writes it).
 */
final class TestImages {
    static final ObjectMapper JSON = new ObjectMapper();

    private TestImages() {
    }

    /** Bytes with a media type: what a descriptor points at. */
    record Blob(String mediaType, byte[] bytes) {
        Digest digest() {
            return Digest.of(bytes);
        }

        ObjectNode descriptor() {
            ObjectNode d = JSON.createObjectNode();
            d.put("mediaType", mediaType);
            d.put("digest", digest().toString());
            d.put("size", bytes.length);
            return d;
        }
    }

    /** One image: its config, its layers as transported (and as tars), and its manifest. */
    record Image(Blob config, List<Blob> layers, List<byte[]> tars, Blob manifest) {
        List<Blob> blobs() {
            var all = new ArrayList<Blob>(List.of(manifest, config));
            all.addAll(layers);
            return all;
        }
    }

    enum Packing { PLAIN, GZIP, ZSTD }

    /** A linux/amd64 image of these layer tars, gzip-compressed, with a config setting all the defaults. */
    static Image image(byte[]... tars) {
        return image("amd64", Packing.GZIP, defaults(), tars);
    }

    static Map<String, Object> defaults() {
        var c = new LinkedHashMap<String, Object>();
        c.put("Env", List.of("PATH=/usr/local/bin:/usr/bin:/bin", "GREETING=hello=world"));
        c.put("WorkingDir", "/srv/app");
        c.put("User", "1000:1000");
        c.put("Entrypoint", List.of("/bin/entry"));
        c.put("Cmd", List.of("serve", "--port", "8080"));
        return c;
    }

    static Image image(String architecture, Packing packing, Map<String, Object> containerConfig, byte[]... tars) {
        ObjectNode config = JSON.createObjectNode();
        config.put("architecture", architecture);
        config.put("os", "linux");
        config.set("config", JSON.valueToTree(containerConfig));
        ObjectNode rootfs = config.putObject("rootfs");
        rootfs.put("type", "layers");
        ArrayNode diffIds = rootfs.putArray("diff_ids");
        var layers = new ArrayList<Blob>();
        for (byte[] tar : tars) {
            diffIds.add(Digest.of(tar).toString());
            layers.add(switch (packing) {
                case PLAIN -> new Blob("application/vnd.oci.image.layer.v1.tar", tar);
                case GZIP -> new Blob("application/vnd.oci.image.layer.v1.tar+gzip", gzip(tar));
                case ZSTD -> new Blob("application/vnd.oci.image.layer.v1.tar+zstd", zstd(tar));
            });
        }
        Blob configBlob = new Blob(ImageJson.OCI_CONFIG, bytes(config));
        return new Image(configBlob, layers, List.of(tars), manifest(configBlob, layers));
    }

    static Blob manifest(Blob config, List<Blob> layers) {
        ObjectNode m = JSON.createObjectNode();
        m.put("schemaVersion", 2);
        m.put("mediaType", Descriptor.OCI_MANIFEST);
        m.set("config", config.descriptor());
        ArrayNode l = m.putArray("layers");
        for (Blob b : layers) l.add(b.descriptor());
        return new Blob(Descriptor.OCI_MANIFEST, bytes(m));
    }

    /** An index of manifests, each with its platform ({@code os/arch}, or null for none). */
    static Blob index(Map<Blob, String> manifests) {
        ObjectNode i = JSON.createObjectNode();
        i.put("schemaVersion", 2);
        i.put("mediaType", Descriptor.OCI_INDEX);
        ArrayNode list = i.putArray("manifests");
        manifests.forEach((blob, platform) -> {
            ObjectNode d = blob.descriptor();
            if (platform != null) {
                ObjectNode p = d.putObject("platform");
                p.put("os", platform.split("/")[0]);
                p.put("architecture", platform.split("/")[1]);
            }
            list.add(d);
        });
        return new Blob(Descriptor.OCI_INDEX, bytes(i));
    }

    /** An OCI image layout: {@code oci-layout}, {@code index.json} and every blob under {@code blobs/sha256}. */
    static byte[] ociLayout(Blob indexJson, List<Blob> blobs) {
        var tar = new TarBuilder().dir("blobs/").dir("blobs/sha256/");
        tar.file("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}".getBytes());
        tar.file("index.json", indexJson.bytes());
        var seen = new java.util.HashSet<Digest>();
        for (Blob b : blobs) if (seen.add(b.digest())) tar.file("blobs/sha256/" + b.digest().hex(), b.bytes());
        return tar.end().bytes();
    }

    /** An OCI layout of one image, its manifest the only entry of index.json (as docker save 25 writes it). */
    static byte[] ociLayout(Image image) {
        return ociLayout(index(platforms(image.manifest(), null)), image.blobs());
    }

    /** Manifests and their platforms ({@code os/arch}, or null), in order, for {@link #index}. */
    static Map<Blob, String> platforms(Object... manifestsAndPlatforms) {
        var m = new LinkedHashMap<Blob, String>();
        for (int i = 0; i < manifestsAndPlatforms.length; i += 2) m.put((Blob) manifestsAndPlatforms[i], (String) manifestsAndPlatforms[i + 1]);
        return m;
    }

    /**
     * A docker-archive as older {@code docker save} wrote it: {@code manifest.json},
     * {@code <config sha256>.json} and {@code <id>/layer.tar} for each (plain) layer; a layer
     * repeated is a symlink to the first copy, as docker wrote it.
     */
    static byte[] dockerArchive(Image image) {
        var tar = new TarBuilder();
        String configName = image.config().digest().hex() + ".json";
        tar.file(configName, image.config().bytes());
        var layerPaths = new ArrayList<String>();
        var firstPath = new LinkedHashMap<Digest, String>();
        for (int i = 0; i < image.tars().size(); i++) {
            byte[] t = image.tars().get(i);
            String id = String.format("%064x", i + 1);
            String path = id + "/layer.tar";
            tar.dir(id + "/");
            String first = firstPath.putIfAbsent(Digest.of(t), path);
            if (first == null) tar.file(path, t);
            else tar.symlink(path, "../" + first);
            layerPaths.add(path);
        }
        ArrayNode manifest = JSON.createArrayNode();
        ObjectNode entry = manifest.addObject();
        entry.put("Config", configName);
        entry.putArray("RepoTags").add("example/app:latest");
        ArrayNode layers = entry.putArray("Layers");
        layerPaths.forEach(layers::add);
        tar.file("manifest.json", bytes(manifest));
        return tar.end().bytes();
    }

    static byte[] gzip(byte[] data) {
        var out = new ByteArrayOutputStream();
        try (var gz = new GZIPOutputStream(out)) {
            gz.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    static byte[] zstd(byte[] data) {
        var out = new ByteArrayOutputStream();
        try (var z = new ZstdOutputStream(out)) {
            z.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    static byte[] bytes(Object json) {
        try {
            return JSON.writeValueAsBytes(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
