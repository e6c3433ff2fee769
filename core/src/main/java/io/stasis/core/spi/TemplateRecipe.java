package io.stasis.core.spi;

import java.nio.file.Path;

/** How to fill a template's root filesystem. Recipes run on the host, as root. */
public interface TemplateRecipe {

    /** The name sandboxes ask for, e.g. {@code tiny}. */
    String name();

    /** Changing the version rebuilds the template on the next start. */
    String version();

    String description();

    /** Roughly how long a build takes, so callers know whether to wait. */
    default boolean slow() {
        return false;
    }

    /**
     * Writes the root filesystem into {@code dir}, an empty directory. Ownership is fixed
     * afterwards by the store.
     */
    void populate(Path dir, Progress progress) throws Exception;

    /** Progress of a long step, for people watching. */
    @FunctionalInterface
    interface Progress {
        Progress NONE = (fraction, message) -> { };

        /** @param fraction 0..1, or negative when unknown */
        void report(double fraction, String message);
    }
}
