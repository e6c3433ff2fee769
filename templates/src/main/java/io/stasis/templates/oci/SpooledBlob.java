package io.stasis.templates.oci;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** A file in a {@link BlobSpool}: its bytes were hashed as they were written, so {@code digest} is what the file holds. */
public record SpooledBlob(Path file, long size, Digest digest) {

    /** Reads the file; a failure is an {@link ImageException} naming {@code subject}. */
    InputStream open(String subject) {
        try {
            return Files.newInputStream(file);
        } catch (IOException e) {
            throw ImageException.io(subject, "cannot read the spooled blob " + file + ": " + e.getMessage(), e);
        }
    }

    /** The whole file, for documents that must be small (manifests, configs): over {@code max} bytes is refused. */
    byte[] readSmall(String subject, int max) {
        if (size > max) throw ImageException.tooLarge(subject, size + " bytes, over the " + max + " a manifest or config may have");
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw ImageException.io(subject, "cannot read the spooled blob " + file + ": " + e.getMessage(), e);
        }
    }

    /** Refuses a blob that is not what a descriptor promised: another digest, or another size. */
    SpooledBlob verify(Digest expected, long expectedSize, String subject) {
        if (!digest.equals(expected))
            throw new ImageException(ImageException.Reason.DIGEST_MISMATCH, expected.toString(),
                    subject + " " + expected + ": its content hashes to " + digest + " (a damaged or forged blob)");
        if (expectedSize >= 0 && size != expectedSize)
            throw new ImageException(ImageException.Reason.DIGEST_MISMATCH, expected.toString(),
                    subject + " " + expected + ": " + size + " bytes where " + expectedSize + " were declared");
        return this;
    }
}
