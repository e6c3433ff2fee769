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

    /**
     * Whether the files {@link #populate} writes already belong to the sandbox's ids (an image's
     * layers, owners shifted into the sandbox's range, setuid bits and file capabilities kept): the
     * store then keeps them as they are instead of giving the whole tree to the sandbox's root.
     */
    default boolean keepsOwners() {
        return false;
    }

    /** What the template records beside its files ({@link TemplateImage#config()}). */
    default TemplateConfig config() {
        return TemplateConfig.NONE;
    }

    /** Progress of a long step, for people watching. */
    @FunctionalInterface
    interface Progress {
        Progress NONE = (fraction, message) -> { };

        /** @param fraction 0..1, or negative when unknown */
        void report(double fraction, String message);
    }
}
