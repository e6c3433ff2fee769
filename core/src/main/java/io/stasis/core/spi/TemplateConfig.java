package io.stasis.core.spi;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a template build records beside the files: who owns the template, what it was built from,
 * and the settings its sandboxes start with.
 *
 * @param tenant  the tenant that built it, which alone (and the root key) sees it; none for the service's own templates
 * @param from    the template it was built on
 * @param env     variables its sandboxes get (a create's own win)
 * @param workdir the working directory the build ended in
 * @param user    the user the build ended as
 * @param cmd     the command the build named to start (a Dockerfile's CMD)
 * @param layerOf for a cached step of a build, the template whose build made it (never listed to callers)
 * @param preboot for a pre-booted template, the process its build started and the checkpoint its sandboxes are forked from
 */
public record TemplateConfig(Optional<String> tenant, Optional<String> from, Map<String, String> env, Optional<String> workdir,
                             Optional<String> user, Optional<List<String>> cmd, Optional<String> layerOf, Optional<Preboot> preboot) {
    public static final TemplateConfig NONE = new TemplateConfig(Optional.empty(), Optional.empty(), Map.of(), Optional.empty(),
            Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

    /**
     * What a pre-booted template's build left running: {@code startCmd} answered {@code readyCmd}, and
     * {@code checkpoint} (a memory checkpoint of the build's sandbox, {@code holder}) holds it.
     */
    public record Preboot(String startCmd, String readyCmd, String checkpoint, String holder) {
        public Preboot {
            Objects.requireNonNull(startCmd);
            Objects.requireNonNull(readyCmd);
            Objects.requireNonNull(checkpoint);
            Objects.requireNonNull(holder);
        }
    }

    public TemplateConfig(Optional<String> tenant, Optional<String> from, Map<String, String> env, Optional<String> workdir,
                          Optional<String> user, Optional<List<String>> cmd, Optional<String> layerOf) {
        this(tenant, from, env, workdir, user, cmd, layerOf, Optional.empty());
    }

    public TemplateConfig {
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(from);
        env = Map.copyOf(env);
        Objects.requireNonNull(workdir);
        Objects.requireNonNull(user);
        cmd = cmd.map(List::copyOf);
        Objects.requireNonNull(layerOf);
        Objects.requireNonNull(preboot);
    }
}
