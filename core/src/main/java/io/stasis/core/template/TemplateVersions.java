package io.stasis.core.template;

import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateImage;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The kept versions of a built template: each version is also installed as {@code name@N} (a
 * read-only snapshot, no copy), which sandboxes record as their template and which a create can
 * name. The newest {@value #KEEP} are kept, and any older one a sandbox was made from; a version's
 * copy carries the template's files and settings, not its pre-boot (that is the current version's).
 */
public final class TemplateVersions {
    /** How many versions are kept besides those in use. */
    public static final int KEEP = 5;
    private static final char AT = '@';

    private TemplateVersions() {
    }

    /** {@code name@version}. */
    public static String pinned(String name, String version) {
        return name + AT + version;
    }

    /** The template a pinned name is a version of ({@code app} of {@code app@3}), or the name itself. */
    public static String baseName(String template) {
        int at = template.indexOf(AT);
        return at < 0 ? template : template.substring(0, at);
    }

    /** Whether {@code template} is {@code name} or one of its versions. */
    public static boolean isOf(String template, String name) {
        return template.equals(name) || template.startsWith(name + AT);
    }

    /** Keeps the version just installed as {@code name@N}, then deletes the versions no longer kept. */
    static void keep(RootStore store, SandboxService sandboxes, TemplateImage installed) {
        var c = installed.config();
        var withoutPreboot = new TemplateConfig(c.tenant(), c.from(), c.env(), c.workdir(), c.user(), c.cmd(), c.layerOf());
        store.copyTemplate(installed.name(), new TemplateImage(pinned(installed.name(), installed.version()), installed.version(),
                installed.builtAt(), installed.sizeBytes(), withoutPreboot));
        var versions = of(store, installed.name());
        for (int i = KEEP; i < versions.size(); i++) {
            String old = versions.get(i).name();
            if (sandboxes.usingTemplate(old).isEmpty()) store.deleteTemplate(old);
        }
    }

    /** The kept versions of {@code name}, newest first. */
    public static List<TemplateImage> of(RootStore store, String name) {
        return store.templates().stream().filter(t -> t.name().startsWith(name + AT))
                .sorted(Comparator.comparingLong((TemplateImage t) -> number(t.version())).reversed()).toList();
    }

    /** The version a create of {@code template} records: its current version's pinned name, when it keeps versions. */
    static Optional<String> current(RootStore store, String template) {
        if (template.indexOf(AT) >= 0) return Optional.empty();
        return store.template(template).map(t -> pinned(template, t.version())).filter(p -> store.template(p).isPresent());
    }

    private static long number(String version) {
        try {
            return Long.parseLong(version);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
