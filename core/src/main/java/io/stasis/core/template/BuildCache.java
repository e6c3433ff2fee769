package io.stasis.core.template;

import io.stasis.core.blob.Sha256;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateImage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The cached steps of template builds. Each step that changes files leaves its sandbox's root as a
 * hidden template named after a key: the hash of the template's tenant and name, the base template's
 * version, and every step up to it (a copy step with what the context holds). Same key, same files:
 * a build starts from its last step whose key is cached, and runs only the steps after it.
 * Keys include the template's name, so the cache of one template is never deleted under another's build.
 */
final class BuildCache {
    /** Hidden templates: a name no caller can give ({@link TemplateBuildRequest#NAME}). */
    static final String LAYER_PREFIX = "_";

    private BuildCache() {
    }

    /**
     * What a build can skip.
     *
     * @param startTemplate the template its sandbox starts from: the last cached step's, or the base
     * @param cachedSteps   how many leading steps need not run
     * @param layers        per step, the name its cached root has (null for a step that changes no files)
     */
    record Plan(String startTemplate, int cachedSteps, List<String> layers) {
        String layerName(int step) {
            return layers.get(step);
        }

        Set<String> layerNames() {
            var names = new HashSet<String>();
            for (String l : layers) if (l != null) names.add(l);
            return names;
        }
    }

    static Plan plan(TemplateBuildRequest request, TemplateImage from, RootStore store) {
        String contextDigest = request.context().map(c -> Sha256.hex(c, 0, c.length)).orElse("");
        String key = Sha256.ofText("stasis-template-build-v1\n" + request.tenant().value() + "\n" + request.name() + "\n" + from.name()
                + "\n" + from.version() + "\n" + from.builtAt());
        var layers = new ArrayList<String>();
        for (var step : request.steps()) {
            String text = step instanceof BuildStep.Copy copy ? copy.withDigest(contextDigest).cacheText() : step.cacheText();
            key = Sha256.ofText(key + "\n" + text);
            layers.add(step.changesFiles() ? LAYER_PREFIX + key.substring(0, 40) : null);
        }
        // The latest cached step is enough: its key stands for every step before it (earlier ones may be gone).
        var cachedNames = new HashSet<String>();
        for (var image : store.templates()) cachedNames.add(image.name());
        for (int i = layers.size() - 1; i >= 0; i--)
            if (layers.get(i) != null && cachedNames.contains(layers.get(i))) return new Plan(layers.get(i), i + 1, layers);
        return new Plan(from.name(), 0, layers);
    }

    /** Deletes the cached steps of template {@code name} that are not in {@code keep}. */
    static void deleteLayersOf(RootStore store, String name, Set<String> keep) {
        for (var image : store.templates())
            if (image.config().layerOf().filter(name::equals).isPresent() && !keep.contains(image.name())) store.deleteTemplate(image.name());
    }
}
