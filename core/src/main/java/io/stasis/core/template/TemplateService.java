package io.stasis.core.template;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.core.tenant.TenantId;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every known recipe installed at its current version. Quick recipes are built before the
 * service starts serving; slow ones (a Debian bootstrap) in the background, with progress that
 * {@link #list()} shows. Creating a sandbox from a template being built waits for it.
 */
public final class TemplateService {
    private static final Logger log = LoggerFactory.getLogger(TemplateService.class);
    /** How often a build's progress reaches the log at INFO (the rest is at DEBUG). */
    static final Duration PROGRESS_LOG_INTERVAL = Duration.ofSeconds(5);

    private final RootStore store;
    private final Map<String, TemplateRecipe> recipes = new LinkedHashMap<>();
    private final FileOwner owner;
    private final Map<String, Build> builds = new ConcurrentHashMap<>();

    /** A build in progress or finished. */
    private static final class Build implements TemplateRecipe.Progress {
        final CompletableFuture<TemplateImage> done = new CompletableFuture<>();
        volatile double fraction = -1;
        volatile String message = "queued";

        @Override
        public void report(double fraction, String message) {
            this.fraction = fraction;
            this.message = message;
        }
    }

    public TemplateService(RootStore store, List<TemplateRecipe> recipes, FileOwner owner) {
        this.store = store;
        this.owner = owner;
        recipes.forEach(r -> this.recipes.put(r.name(), r));
    }

    /** What to do at start-up about recipes that take long to build. */
    public enum SlowBuilds {
        /** Build them on background threads; creates from them wait. */
        BACKGROUND,
        /** Build them before returning. */
        WAIT,
        /** Leave them until a sandbox asks for one. */
        ON_DEMAND
    }

    /** Installs every recipe that is missing or outdated: quick ones now, slow ones as {@code slowBuilds} says. */
    public void ensureInstalled(SlowBuilds slowBuilds) {
        for (var recipe : recipes.values()) {
            var installed = store.template(recipe.name());
            if (installed.isPresent() && installed.get().version().equals(recipe.version())) continue;
            if (recipe.slow() && slowBuilds == SlowBuilds.ON_DEMAND) continue;
            var build = startBuild(recipe);
            if (recipe.slow() && slowBuilds == SlowBuilds.BACKGROUND) continue;
            try {
                build.done.join();
            } catch (RuntimeException e) {
                log.atError().addKeyValue("template", recipe.name()).setCause(e).log("template build failed");
            }
        }
    }

    private Build startBuild(TemplateRecipe recipe) {
        var build = new Build();
        var previous = builds.putIfAbsent(recipe.name(), build);
        if (previous != null && !previous.done.isCompletedExceptionally()) return previous;
        if (previous != null) builds.put(recipe.name(), build);
        Thread.ofVirtual().name("template-" + recipe.name()).start(() -> {
            long start = System.nanoTime();
            log.atInfo().addKeyValue("template", recipe.name()).addKeyValue("version", recipe.version()).log("building template");
            var progressLog = new ProgressLog(log, recipe.name(), PROGRESS_LOG_INTERVAL, System::nanoTime);
            try {
                var image = store.installTemplate(recipe, owner, (fraction, message) -> {
                    build.report(fraction, message);
                    progressLog.report(fraction, message);
                });
                build.report(1, "ready");
                log.atInfo().addKeyValue("template", recipe.name())
                        .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                        .addKeyValue("sizeBytes", image.sizeBytes()).log("template ready");
                build.done.complete(image);
            } catch (Throwable e) {
                build.report(-1, String.valueOf(e.getMessage()));
                log.atError().addKeyValue("template", recipe.name()).setCause(e).log("template build failed");
                build.done.completeExceptionally(e);
            }
        });
        return build;
    }

    /** Installs a recipe that is not one of the service's (an imported image), its files given to the sandboxes' root unless it keeps its owners. */
    public TemplateImage install(TemplateRecipe recipe, TemplateRecipe.Progress progress) {
        return store.installTemplate(recipe, owner, progress);
    }

    /** Every template: installed ones and those being built. */
    public List<TemplateStatus> list() {
        return list(Optional.empty());
    }

    /** The templates {@code tenant} sees: the service's own and those it built. */
    public List<TemplateStatus> list(TenantId tenant) {
        return list(Optional.of(tenant));
    }

    private List<TemplateStatus> list(Optional<TenantId> tenant) {
        var out = new LinkedHashMap<String, TemplateStatus>();
        var installed = store.templates();
        for (var recipe : recipes.values()) out.put(recipe.name(), statusOf(recipe.name(), recipe.description(), installed));
        for (var image : installed)
            if (image.config().layerOf().isEmpty() && image.name().equals(TemplateVersions.baseName(image.name()))
                    && tenant.map(t -> visibleTo(image, t)).orElse(true))
                out.computeIfAbsent(image.name(), n -> statusOf(n, "", installed));
        return List.copyOf(out.values());
    }

    /** The status of one template {@code tenant} sees; {@code template_not_found} for any other. */
    public TemplateStatus status(TenantId tenant, String name) {
        return list(tenant).stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow(() -> StasisException.templateNotFound(name));
    }

    /**
     * As {@link #status(TenantId, String)}, but a template whose first build runs (none installed
     * yet) is {@code building}.
     */
    public TemplateStatus statusOrBuilding(TenantId tenant, String name, boolean built) {
        return list(tenant).stream().filter(t -> t.name().equals(name)).findFirst().orElseGet(() -> {
            if (!built) throw StasisException.templateNotFound(name);
            return new TemplateStatus(name, "", "building", Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.empty());
        });
    }

    /** Whether a tenant may use a template: the service's own are everyone's, a built one its tenant's. */
    public static boolean visibleTo(TemplateImage image, TenantId tenant) {
        return image.config().tenant().map(t -> t.equals(tenant.value())).orElse(true);
    }

    /** {@code template} at its current version ({@code app@3}) if it keeps versions, else as it is. */
    public String pin(String template) {
        return TemplateVersions.current(store, template).orElse(template);
    }

    /** Whether {@code name} is one of the service's own templates (made by a recipe). */
    public boolean isRecipe(String name) {
        return recipes.containsKey(name);
    }

    /** {@code template_not_found} unless {@code tenant} may use template {@code name} (installed, or a recipe's). */
    public void requireVisible(TenantId tenant, String name) {
        if (recipes.containsKey(name)) return;
        if (store.template(name).filter(i -> visibleTo(i, tenant)).isEmpty()) throw StasisException.templateNotFound(name);
    }

    /** As {@link #awaitReady(TenantId, String, Duration)}, then the installed template. */
    public TemplateImage awaitReadyImage(TenantId tenant, String name, Duration timeout) {
        awaitReady(tenant, name, timeout);
        return store.template(name).orElseThrow(() -> StasisException.templateNotFound(name));
    }

    /** As {@link #awaitReady(String, Duration)}, for a template {@code tenant} may use. */
    public void awaitReady(TenantId tenant, String name, Duration timeout) {
        requireVisible(tenant, name);
        awaitReady(name, timeout);
    }

    private TemplateStatus statusOf(String name, String description, List<TemplateImage> installed) {
        var image = installed.stream().filter(i -> i.name().equals(name)).findFirst();
        var recipe = Optional.ofNullable(recipes.get(name));
        var build = builds.get(name);
        boolean current = image.isPresent() && recipe.map(r -> r.version().equals(image.get().version())).orElse(true);
        if (current)
            return new TemplateStatus(name, description, "ready", image.map(TemplateImage::version),
                    image.map(TemplateImage::builtAt), image.map(TemplateImage::sizeBytes), Optional.empty(), Optional.empty(),
                    image.map(TemplateImage::config));
        if (build != null && build.done.isCompletedExceptionally())
            return new TemplateStatus(name, description, "failed", recipe.map(TemplateRecipe::version),
                    Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(build.message));
        if (build == null)
            return new TemplateStatus(name, description, "pending", recipe.map(TemplateRecipe::version),
                    Optional.empty(), Optional.empty(), Optional.empty(), Optional.of("built when a sandbox first asks for it"));
        return new TemplateStatus(name, description, "building", recipe.map(TemplateRecipe::version),
                Optional.empty(), Optional.empty(),
                Optional.ofNullable(build).map(b -> b.fraction).filter(f -> f >= 0),
                Optional.ofNullable(build).map(b -> b.message));
    }

    /**
     * Returns once the template can be used, waiting up to {@code timeout} for a first build.
     * {@code template_not_found} if no such template exists or is known;
     * {@code template_unavailable} if its build failed or does not finish in time.
     */
    public void awaitReady(String name, Duration timeout) {
        // An older version stays usable while its successor is built.
        if (store.template(name).isPresent()) return;
        var recipe = recipes.get(name);
        if (recipe == null) throw StasisException.templateNotFound(name);
        var build = builds.get(name);
        if (build == null || build.done.isCompletedExceptionally()) build = startBuild(recipe);
        try {
            build.done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new StasisException(ErrorCode.TEMPLATE_UNAVAILABLE, "template '" + name + "' is still being built ("
                    + build.message + "); try again later", Map.of("template", name));
        } catch (ExecutionException e) {
            throw new StasisException(ErrorCode.TEMPLATE_UNAVAILABLE, "template '" + name + "' could not be built: "
                    + e.getCause().getMessage(), Map.of("template", name), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisException(ErrorCode.TEMPLATE_UNAVAILABLE, "interrupted while waiting for template " + name);
        }
    }
}
