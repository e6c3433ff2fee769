package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.RuntimeImages;
import io.stasis.core.spi.StreamReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/** The CRIU images of the {@link ImageStore}, as the service asks for them, with its failures told as Stasis errors. */
final class RuncImages implements RuntimeImages {
    private final ImageStore images;

    RuncImages(ImageStore images) {
        this.images = images;
    }

    @Override
    public OptionalLong imageSize(CheckpointId image) {
        return images.completeSize(image);
    }

    @Override
    public <R> R exportImage(CheckpointId image, StreamReader<R> reader) {
        try {
            return images.exportTo(image, reader);
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "export of image " + image + " failed: " + e.getMessage(),
                    Map.of("checkpoint", image.value(), "step", "export image"), e);
        }
    }

    @Override
    public long importImage(CheckpointId image, InputStream stream) {
        if (images.isComplete(image) || Files.exists(images.dir(image)))
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "import of image " + image + " failed: it exists already",
                    Map.of("checkpoint", image.value(), "step", "import image"));
        try {
            return images.importFrom(image, stream);
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "import of image " + image + " failed: " + e.getMessage(),
                    Map.of("checkpoint", image.value(), "step", "import image"), e);
        }
    }

    @Override
    public void deleteImage(CheckpointId image) {
        images.delete(image);
    }

    @Override
    public Set<CheckpointId> listImages() {
        return images.list();
    }
}
