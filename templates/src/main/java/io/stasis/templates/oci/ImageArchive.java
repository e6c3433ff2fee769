package io.stasis.templates.oci;

import io.stasis.fs.linux.SizeLimitedInputStream;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads an image tarball (plain, gzip or zstd) as it arrives, for example an upload's body, and
 * tells its kind:
 * <ul>
 *   <li>an <b>OCI image layout</b> ({@code oci-layout}, {@code index.json}, {@code blobs/sha256/...}):
 *       the index is followed to the manifest for the platform (linux/amd64 by default), or to its
 *       only manifest;</li>
 *   <li>a <b>docker-archive</b> as {@code docker save} writes it ({@code manifest.json} with
 *       {@code Config} and {@code Layers}, of exactly one image).</li>
 * </ul>
 * An archive that is both (Docker 25 and later write both) is read as an OCI layout.
 *
 * <p>Members can come in any order, so every regular member is first written to a {@link BlobSpool}
 * (bounded by the limit: a bigger archive, compressed or not, is refused as it streams, and so is
 * one of more than {@value #MAX_MEMBERS} members), then read from there. Every blob used is
 * verified: an OCI blob against the digest it is named by and its declared size, a docker-archive's
 * config against its {@code <sha256>.json} name and each layer against the config's
 * {@code rootfs.diff_ids}; a lying archive is refused naming the blob. The spool is removed when
 * anything fails, and otherwise when the returned image is closed. Archive member names are never
 * used as host paths.
 */
public final class ImageArchive {
    public static final int MAX_MEMBERS = 100_000;
    private static final Pattern LAYOUT_BLOB = Pattern.compile("blobs/sha256/([a-f0-9]{64})");
    private static final Pattern CONFIG_NAME = Pattern.compile("(?:.*/)?([a-f0-9]{64})\\.json");
    private static final int MAX_LINK_HOPS = 16;

    private final Path spoolParent;
    private final long limit;
    private final Platform platform;

    /** Spools to the JDK's temporary directory, up to {@link BlobSpool#DEFAULT_LIMIT}, for linux/amd64. */
    public ImageArchive() {
        this(null, BlobSpool.DEFAULT_LIMIT, Platform.LINUX_AMD64);
    }

    /**
     * @param spoolParent where spool directories are made (null: the JDK's temporary directory); use a disk, not a tmpfs
     * @param limit       the most bytes an archive may hold, uncompressed
     * @param platform    the image wanted from a multi-platform index
     */
    public ImageArchive(Path spoolParent, long limit, Platform platform) {
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
        this.spoolParent = spoolParent;
        this.limit = limit;
        this.platform = Objects.requireNonNull(platform);
    }

    /**
     * Reads the whole archive from {@code body} (not closed here) and returns the image, which the
     * caller closes.
     *
     * @param source how messages name the archive, e.g. {@code upload}
     * @throws ImageException whatever is wrong; nothing is left on disk then
     */
    public OciImage read(InputStream body, String source) {
        BlobSpool spool = BlobSpool.create(spoolParent, limit);
        try {
            Members members = spool(body, source, spool);
            if (members.has("oci-layout") && members.has("index.json")) return fromLayout(members, source, spool);
            if (members.has("manifest.json")) return fromDockerArchive(members, source, spool);
            throw ImageException.malformed(source, "neither an OCI image layout (oci-layout, index.json) nor a docker-archive"
                    + " (manifest.json); it holds " + members.sample());
        } catch (RuntimeException | Error e) {
            spool.close();
            throw e;
        }
    }

    // --- spooling ---

    /** The archive's members by normalised name: regular files spooled, symlinks remembered. */
    private static final class Members {
        final String source;
        final Map<String, SpooledBlob> files = new HashMap<>();
        final Map<String, String> links = new HashMap<>();

        Members(String source) {
            this.source = source;
        }

        boolean has(String name) {
            return find(name).isPresent();
        }

        Optional<SpooledBlob> find(String name) {
            String path = name;
            for (int hop = 0; hop <= MAX_LINK_HOPS; hop++) {
                SpooledBlob file = files.get(path);
                if (file != null) return Optional.of(file);
                String target = links.get(path);
                if (target == null) return Optional.empty();
                int slash = path.lastIndexOf('/');
                String base = target.startsWith("/") || slash < 0 ? "" : path.substring(0, slash + 1);
                path = normalize(base + target);
                if (path == null) return Optional.empty();
            }
            return Optional.empty();
        }

        SpooledBlob file(String name, String role) {
            return find(name).orElseThrow(() -> ImageException.malformed(source, role + " '" + name + "' is missing from the archive"));
        }

        String sample() {
            var names = new ArrayList<>(files.keySet());
            names.sort(null);
            return names.isEmpty() ? "no files" : String.join(", ", names.subList(0, Math.min(8, names.size())))
                    + (names.size() > 8 ? " and " + (names.size() - 8) + " more" : "");
        }
    }

    private Members spool(InputStream body, String source, BlobSpool spool) {
        var members = new Members(source);
        // what a tar of `limit` bytes of files can add: a header per member and padding
        long bound = limit + (long) MAX_MEMBERS * 1024 + (1 << 20);
        // A compressed tar bomb stops here as it inflates.
        InputStream in = new SizeLimitedInputStream(Compression.decompressed(body, source), bound,
                () -> ImageException.tooLarge(source, "more than " + bound + " bytes"));
        var reader = new TarReader(in, limit);
        int count = 0;
        for (var next = reader.next(); next.isPresent(); next = reader.next()) {
            TarEntry e = next.get();
            if (++count > MAX_MEMBERS) throw ImageException.tooLarge(source, "more than " + MAX_MEMBERS + " members");
            String name = normalize(e.name());
            if (name == null) throw ImageException.malformed(source, "member '" + e.name() + "' climbs out of the archive");
            String subject = source + " member '" + name + "'";
            switch (e.kind()) {
                case TarEntry.RegularFile f -> members.files.put(name, spool.write(reader.content(), subject, limit));
                case TarEntry.Symlink s -> members.links.put(name, s.target());
                case TarEntry.HardLink h -> {
                    String target = normalize(h.target());
                    SpooledBlob file = target == null ? null : members.files.get(target);
                    if (file == null) throw ImageException.malformed(subject, "a hard link to '" + h.target() + "', which came before it");
                    members.files.put(name, file);
                }
                case TarEntry.Directory d -> {
                    // nothing to keep
                }
                default -> throw ImageException.malformed(subject, "an image archive holds no " + e.kind().getClass().getSimpleName());
            }
        }
        return members;
    }

    /** {@code ./a//b/} to {@code a/b}; {@code ..} resolved, null when it climbs above the top. A leading {@code /} is dropped. */
    static String normalize(String name) {
        var out = new ArrayList<String>();
        for (String c : name.split("/")) {
            if (c.isEmpty() || c.equals(".")) continue;
            if (c.equals("..")) {
                if (out.isEmpty()) return null;
                out.removeLast();
            } else out.add(c);
        }
        return String.join("/", out);
    }

    // --- OCI image layout ---

    private OciImage fromLayout(Members members, String source, BlobSpool spool) {
        String version = ImageJson.layoutVersion(members.file("oci-layout", "oci-layout").readSmall("oci-layout", ImageJson.MAX_DOCUMENT_BYTES),
                source + " oci-layout");
        if (!version.startsWith("1.")) throw ImageException.unsupported(source + " oci-layout", "image layout version " + version);
        byte[] index = members.file("index.json", "index.json").readSmall(source + " index.json", ImageJson.MAX_DOCUMENT_BYTES);
        var top = ImageJson.document(index, Descriptor.OCI_INDEX, source + " index.json");
        var blobs = new ImageAssembly.Blobs() {
            @Override
            public byte[] manifest(Descriptor d) {
                return layoutBlob(members, d, "manifest").readSmall("manifest " + d.digest(), ImageJson.MAX_DOCUMENT_BYTES);
            }

            @Override
            public SpooledBlob blob(Descriptor d, String role) {
                return layoutBlob(members, d, role);
            }
        };
        return ImageAssembly.assemble(source, top, Optional.empty(), blobs, platform, spool);
    }

    private static SpooledBlob layoutBlob(Members members, Descriptor d, String role) {
        return members.file("blobs/sha256/" + d.digest().hex(), role + " " + d.digest()).verify(d.digest(), d.size(), role);
    }

    // --- docker-archive ---

    private OciImage fromDockerArchive(Members members, String source, BlobSpool spool) {
        String subject = source + " manifest.json";
        var images = ImageJson.archiveManifest(members.file("manifest.json", "manifest.json").readSmall(subject, ImageJson.MAX_DOCUMENT_BYTES), subject);
        if (images.isEmpty()) throw ImageException.malformed(subject, "names no image");
        if (images.size() > 1)
            throw ImageException.unsupported(subject, "holds " + images.size() + " images (" + images.stream()
                    .map(i -> i.repoTags().isEmpty() ? i.config() : String.join(" ", i.repoTags())).toList() + "): import one at a time");
        var image = images.getFirst();

        String configName = normalize(image.config());
        SpooledBlob configBlob = members.file(configName == null ? image.config() : configName, "config");
        namedDigest(configName).ifPresent(d -> configBlob.verify(d, -1, "config"));
        String configSubject = "config " + image.config();
        ImageConfig config = ImageJson.config(configBlob.readSmall(configSubject, ImageJson.MAX_DOCUMENT_BYTES), configBlob.digest(), configSubject);
        if (config.diffIds().size() != image.layers().size())
            throw ImageException.malformed(configSubject, "names " + config.diffIds().size() + " layer diff ids where manifest.json has "
                    + image.layers().size() + " layers");

        var layers = new ArrayList<Layer>();
        for (int i = 0; i < image.layers().size(); i++) {
            String path = normalize(image.layers().get(i));
            String layerSubject = "layer '" + image.layers().get(i) + "'";
            SpooledBlob blob = members.file(path == null ? image.layers().get(i) : path, "layer");
            namedDigest(path).ifPresent(d -> blob.verify(d, -1, "layer"));
            Digest diffId = config.diffIds().get(i);
            Digest uncompressed = uncompressedDigest(blob, layerSubject);
            if (!uncompressed.equals(diffId))
                throw new ImageException(ImageException.Reason.DIGEST_MISMATCH, image.layers().get(i), layerSubject
                        + ": its content hashes to " + uncompressed + " where the config's diff id is " + diffId + " (a damaged or forged layer)");
            boolean plain = uncompressed.equals(blob.digest());
            layers.add(new Layer(blob.digest(), plain ? ImageJson.ARCHIVE_LAYER : "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    blob.size(), blob));
        }
        return ImageAssembly.finish(source, Optional.empty(), config, layers, platform, spool);
    }

    /** The digest a member's name states: {@code <sha256>.json} for a config, {@code blobs/sha256/<hex>} for anything. */
    private static Optional<Digest> namedDigest(String name) {
        if (name == null) return Optional.empty();
        Matcher m = LAYOUT_BLOB.matcher(name);
        if (m.matches()) return Optional.of(new Digest(m.group(1)));
        m = CONFIG_NAME.matcher(name);
        return m.matches() ? Optional.of(new Digest(m.group(1))) : Optional.empty();
    }

    /** The digest of a layer's tar stream: the spooled file's own for a plain tar, else hashed decompressing. */
    private static Digest uncompressedDigest(SpooledBlob blob, String subject) {
        try (InputStream raw = blob.open(subject); var buffered = new BufferedInputStream(raw)) {
            if (Compression.detect(buffered, subject) == Compression.NONE) return blob.digest();
        } catch (IOException e) {
            throw ImageException.io(subject, "cannot read the spooled layer: " + e.getMessage(), e);
        }
        MessageDigest sha = Digest.sha256();
        try (InputStream in = Compression.decompressed(blob.open(subject), subject)) {
            byte[] buffer = new byte[64 * 1024];
            for (int n; (n = in.read(buffer)) != -1; ) sha.update(buffer, 0, n);
        } catch (IOException e) {
            throw ImageException.io(subject, "cannot read the spooled layer: " + e.getMessage(), e);
        }
        return Digest.of(sha);
    }
}
