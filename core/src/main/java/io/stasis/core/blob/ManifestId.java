package io.stasis.core.blob;

/**
 * A manifest's name: the SHA-256 of its encoded bytes ({@link ManifestCodec}). The same stream
 * always gets the same id, and a reader can check the manifest it fetched before trusting the
 * chunk list in it.
 */
public record ManifestId(String hex) {
    public ManifestId {
        Sha256.check(hex, "manifest id");
    }

    /** The id of an encoded manifest. */
    public static ManifestId of(byte[] encoded) {
        return new ManifestId(Sha256.hex(encoded, 0, encoded.length));
    }

    /** Parses the text form; {@link IllegalArgumentException} if it is not 64 lowercase hex digits. */
    public static ManifestId parse(String hex) {
        return new ManifestId(hex);
    }

    @Override
    public String toString() {
        return hex;
    }
}
