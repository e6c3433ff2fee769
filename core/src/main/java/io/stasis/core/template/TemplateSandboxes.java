package io.stasis.core.template;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateConfig;
import java.util.Optional;

/**
 * Creates sandboxes from templates, as callers ask for them: a pre-booted template's sandbox is a
 * memory fork of its checkpoint (its process already running and ready), any other's starts fresh.
 */
public final class TemplateSandboxes {
    private final SandboxService sandboxes;
    private final CheckpointService checkpoints;
    private final RootStore store;

    public TemplateSandboxes(SandboxService sandboxes, CheckpointService checkpoints, RootStore store) {
        this.sandboxes = sandboxes;
        this.checkpoints = checkpoints;
        this.store = store;
    }

    public Sandbox create(SandboxSpec request) {
        var spec = sandboxes.pinned(request);
        // The pre-boot is the current version's: an older one's sandboxes start from its files.
        String base = TemplateVersions.baseName(spec.template());
        var current = store.template(base).filter(i -> TemplateService.visibleTo(i, spec.tenant()));
        boolean isCurrent = current.map(c -> spec.template().equals(base) || spec.template().equals(TemplateVersions.pinned(base, c.version())))
                .orElse(false);
        var preboot = isCurrent ? current.flatMap(i -> i.config().preboot()) : Optional.<TemplateConfig.Preboot>empty();
        if (preboot.isEmpty()) return sandboxes.create(request);
        // A fork restores its parent's mounts as they were: it can take no others.
        if (!spec.volumes().isEmpty() || !spec.buckets().isEmpty())
            throw StasisException.invalid(spec.volumes().isEmpty() ? "mounts" : "volumes", "template '" + spec.template()
                    + "' is pre-booted: its sandboxes are forks of its running process and mount no volumes or buckets");
        return checkpoints.createFromTemplate(sandboxes.withTemplateEnv(spec), new CheckpointId(preboot.get().checkpoint()));
    }
}
