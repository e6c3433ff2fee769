package io.stasis.core.template;

import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.exec.ExecResult;
import io.stasis.core.exec.ExecService;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.process.ProcessService;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.core.tenant.TenantId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds templates from steps, each build in a sandbox of its own (the build's limits and egress
 * policy apply to every step). After each step that changes files, the sandbox's root is kept as a
 * hidden template (a btrfs snapshot: a cached step, {@link BuildCache}); a later build with the same
 * base and the same first steps starts from the last cached one. The result is installed as a new
 * version of the template, which only its tenant sees.
 */
public final class TemplateBuilds implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TemplateBuilds.class);
    /** The metadata key that marks a build's sandbox, with the template's name as its value. */
    public static final String BUILD_METADATA = "stasis.build";
    private static final int LOG_BYTES = 4 << 20;
    /** How long a build waits for its base template's first build (a Debian bootstrap takes minutes). */
    private static final Duration FROM_WAIT = Duration.ofMinutes(30);
    static final int FAILURE_OUTPUT_BYTES = 4096;
    private static final LifecyclePolicy BUILD_LIFECYCLE = new LifecyclePolicy(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.of(Duration.ofHours(1)), Optional.of(Duration.ofHours(12)), false, Optional.empty());

    /** The services a build drives. */
    public record Services(SandboxService sandboxes, ExecService exec, ProcessService processes, CheckpointService checkpoints,
                           LifecycleService lifecycle) {
    }

    private final RootStore store;
    private final TemplateService templates;
    private final SandboxService sandboxes;
    private final ExecService exec;
    private final Prebooter prebooter;
    private final Clock clock;
    private final RuntimeKind runtime;
    private final NetworkPolicy buildPolicy;
    private final Map<String, Build> builds = new ConcurrentHashMap<>();
    private final Set<Thread> buildThreads = ConcurrentHashMap.newKeySet();
    private volatile boolean closing;

    /**
     * @param runtime     what runs the builds' sandboxes
     * @param buildPolicy the egress policy of a build that names none
     */
    public TemplateBuilds(Services services, RootStore store, TemplateService templates, Clock clock, RuntimeKind runtime,
                          NetworkPolicy buildPolicy) {
        this.runtime = runtime;
        this.buildPolicy = buildPolicy;
        this.store = store;
        this.templates = templates;
        this.sandboxes = services.sandboxes();
        this.exec = services.exec();
        this.prebooter = new Prebooter(services);
        this.clock = clock;
    }

    /** One build (from steps, or an image's import): what it makes, its output and progress. */
    public static final class Build {
        private final String name;
        private final TenantId tenant;
        private final String from;
        private final int steps;
        private final Optional<TemplateBuildRequest> request;
        private final BuildLog log = new BuildLog(LOG_BYTES);
        private final Instant startedAt;
        private volatile int step;
        private volatile int cachedSteps;
        private volatile Instant endedAt;
        private volatile BuildReport.Failure failure;
        private volatile TemplateImage result;

        private Build(String name, TenantId tenant, String from, int steps, Optional<TemplateBuildRequest> request, Instant startedAt) {
            this.name = name;
            this.tenant = tenant;
            this.from = from;
            this.steps = steps;
            this.request = request;
            this.startedAt = startedAt;
        }

        public String name() {
            return name;
        }

        public BuildLog log() {
            return log;
        }

        public boolean running() {
            return endedAt == null;
        }

        public Optional<TemplateImage> result() {
            return Optional.ofNullable(result);
        }

        public BuildReport report() {
            return new BuildReport(from, step, steps, cachedSteps, startedAt, Optional.ofNullable(endedAt), Optional.ofNullable(failure));
        }
    }

    /** An image to import: opened (pulled, or read from an upload) by the import, closed once it ended. */
    @FunctionalInterface
    public interface ImageSource extends AutoCloseable {
        /** The image's files as a recipe that keeps its owners, with the image's settings as its config. */
        ImportedImage open(BuildLog log) throws Exception;

        /** Frees what the source holds already (an upload's spool) when the import is refused before it opens it. */
        @Override
        default void close() {
        }
    }

    /** An opened image: its recipe, and what closing it frees (a spool of its layers). */
    public interface ImportedImage extends AutoCloseable {
        TemplateRecipe recipe();

        @Override
        void close();
    }

    /**
     * Starts a build in the background and returns it. {@code name_taken} if the name is a
     * service template's or another tenant's; {@code invalid_state} while another build of it runs;
     * {@code template_not_found} for an unknown {@code from}.
     */
    public Build start(TemplateBuildRequest request) {
        requireFreeName(request.tenant(), request.name());
        templates.requireVisible(request.tenant(), request.from());
        var build = new Build(request.name(), request.tenant(), request.from(), request.steps().size(), Optional.of(request), clock.instant());
        return begin(build, () -> run(build));
    }

    /**
     * Starts importing an image as template {@code name} of {@code tenant} in the background: its
     * layers applied as they are (owners, setuid bits and file capabilities kept), its Env,
     * WorkingDir, User and command recorded as the template's. Errors as {@link #start}.
     *
     * @param source what the image is, as the template shows it ({@code oci://...}, {@code upload})
     */
    public Build startImport(TenantId tenant, String name, String source, ImageSource image) {
        try {
            TemplateBuildRequest.requireName("name", name);
            requireFreeName(tenant, name);
            var build = new Build(name, tenant, source, 0, Optional.empty(), clock.instant());
            return begin(build, () -> runImport(build, image));
        } catch (RuntimeException refused) {
            image.close();
            throw refused;
        }
    }

    /** {@code name_taken} unless {@code tenant} may build or import template {@code name}: checked before an upload is read. */
    public void requireBuildable(TenantId tenant, String name) {
        TemplateBuildRequest.requireName("name", name);
        requireFreeName(tenant, name);
    }

    private void requireFreeName(TenantId tenant, String name) {
        if (templates.isRecipe(name)) throw StasisException.nameTaken(name);
        store.template(name).ifPresent(existing -> {
            if (!existing.config().tenant().equals(Optional.of(tenant.value()))) throw StasisException.nameTaken(name);
        });
    }

    private Build begin(Build build, Runnable work) {
        var running = builds.compute(build.name, (name, previous) -> previous != null && previous.running() ? previous : build);
        if (running != build)
            throw new StasisException(ErrorCode.INVALID_STATE, "template '" + build.name + "' is being built; wait for that build to end",
                    Map.of("template", build.name));
        if (closing) throw new StasisException(ErrorCode.HOST_BUSY, "the service is stopping");
        var thread = Thread.ofVirtual().name("template-build-" + build.name).unstarted(() -> {
            try {
                work.run();
            } finally {
                buildThreads.remove(Thread.currentThread());
            }
        });
        buildThreads.add(thread);
        thread.start();
        return build;
    }

    private void runImport(Build build, ImageSource source) {
        long start = System.nanoTime();
        build.log.line("# importing " + build.from + " as template " + build.name);
        try (var image = source.open(build.log)) {
            var inner = image.recipe();
            var previous = store.template(build.name);
            var config = inner.config();
            var recipe = new ImportRecipe(build.name, nextVersion(previous), new TemplateConfig(Optional.of(build.tenant.value()),
                    Optional.of(build.from), config.env(), config.workdir(), config.user(), config.cmd(), Optional.empty()), inner);
            var installed = templates.install(recipe, (fraction, message) -> build.log.line("# " + message));
            TemplateVersions.keep(store, sandboxes, installed);
            previous.flatMap(p -> p.config().preboot()).ifPresent(prebooter::deleteHolder);
            build.result = installed;
            build.log.line("# template " + build.name + " version " + installed.version() + " ready (" + installed.sizeBytes()
                    + " bytes of files)");
            log.atInfo().addKeyValue("template", build.name).addKeyValue("source", build.from).addKeyValue("version", installed.version())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("image imported");
        } catch (Exception | Error e) {
            String message = e instanceof StasisException se ? se.getMessage() : String.valueOf(e.getMessage());
            build.log.line("# import failed: " + message);
            build.failure = new BuildReport.Failure(0, "IMPORT " + build.from, Optional.empty(), message, build.log.tail(FAILURE_OUTPUT_BYTES));
            log.atWarn().addKeyValue("template", build.name).setCause(e).log("image import failed");
        } finally {
            build.endedAt = clock.instant();
            build.log.finish();
        }
    }

    /** An image's recipe under the template's name and next version, with the tenant's settings. */
    private record ImportRecipe(String name, String version, TemplateConfig config, TemplateRecipe image) implements TemplateRecipe {
        @Override
        public String description() {
            return image.description();
        }

        @Override
        public boolean slow() {
            return true;
        }

        @Override
        public void populate(java.nio.file.Path dir, Progress progress) throws Exception {
            image.populate(dir, progress);
        }

        @Override
        public boolean keepsOwners() {
            return image.keepsOwners();
        }
    }

    /**
     * The environment a command starts with in a sandbox of template {@code name}: the service's
     * defaults and what the template's build set (only those for a template the tenant does not see).
     */
    public Map<String, String> environmentOf(TenantId tenant, String name) {
        var env = new LinkedHashMap<>(ExecService.DEFAULT_ENV);
        store.template(name).filter(i -> TemplateService.visibleTo(i, tenant)).ifPresent(i -> env.putAll(i.config().env()));
        return env;
    }

    /** One kept version of a template: its pinned name ({@code app@3}), and how many sandboxes were made from it. */
    public record Version(String template, String version, Instant builtAt, long sizeBytes, int sandboxes) {
    }

    /** The kept versions of a template {@code tenant} sees, newest first; {@code template_not_found} for any other. */
    public List<Version> versions(TenantId tenant, String name) {
        templates.status(tenant, name);
        return TemplateVersions.of(store, name).stream().filter(v -> TemplateService.visibleTo(v, tenant))
                .map(v -> new Version(v.name(), v.version(), v.builtAt(), v.sizeBytes(), sandboxes.usingTemplate(v.name()).size())).toList();
    }

    /** The latest build of a template this tenant sees, if one ran since the service started. */
    public Optional<Build> latest(TenantId tenant, String name) {
        return Optional.ofNullable(builds.get(name)).filter(b -> b.tenant.equals(tenant));
    }

    /** Every build of the tenant's that ran since the service started, latest of each template. */
    public List<Build> of(TenantId tenant) {
        return builds.values().stream().filter(b -> b.tenant.equals(tenant)).toList();
    }

    /**
     * Deletes a template the tenant built, with its cached steps. {@code template_not_found} if it
     * sees none; {@code invalid_state} for the service's own templates, while a build of it runs,
     * and while a sandbox made from it exists (the sandboxes are named in the error).
     */
    public void delete(TenantId tenant, String name) {
        if (templates.isRecipe(name))
            throw new StasisException(ErrorCode.INVALID_STATE, "template '" + name + "' is one of the service's own; it cannot be deleted",
                    Map.of("template", name));
        var build = latest(tenant, name);
        if (build.isPresent() && build.get().running())
            throw new StasisException(ErrorCode.INVALID_STATE, "template '" + name + "' is being built; delete it once the build ends",
                    Map.of("template", name));
        var image = store.template(name).filter(i -> TemplateService.visibleTo(i, tenant)).filter(i -> i.config().layerOf().isEmpty());
        if (image.isEmpty()) {
            if (build.isPresent()) {
                builds.remove(name, build.get());
                return;
            }
            throw StasisException.templateNotFound(name);
        }
        var users = sandboxes.usingTemplate(name);
        if (!users.isEmpty())
            throw new StasisException(ErrorCode.TEMPLATE_IN_USE, "template '" + name + "' is used by " + users.size() + " sandbox(es): "
                    + users.stream().limit(5).map(s -> s.id().value()).collect(Collectors.joining(", "))
                    + (users.size() > 5 ? ", ..." : "") + "; delete them first", Map.of("template", name, "sandboxes", users.size()));
        store.deleteTemplate(name);
        for (var version : TemplateVersions.of(store, name)) store.deleteTemplate(version.name());
        image.get().config().preboot().ifPresent(prebooter::deleteHolder);
        BuildCache.deleteLayersOf(store, name, Set.of());
        build.ifPresent(b -> builds.remove(name, b));
        log.atInfo().addKeyValue("template", name).addKeyValue("tenant", tenant).log("template deleted");
    }

    /**
     * Stops the builds under way (their commands are killed with their sandboxes' output readers let
     * go), as a stop of the service would; their sandboxes stay for the next start to delete.
     */
    @Override
    public void close() {
        closing = true;
        for (Thread t : buildThreads) t.interrupt();
        for (Thread t : buildThreads) {
            try {
                t.join(Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** After a restart: sandboxes of builds the stop cut short are deleted (their builds failed). */
    public void removeInterruptedBuilds() {
        var holders = new java.util.HashSet<String>();
        for (var image : store.templates()) image.config().preboot().ifPresent(p -> holders.add(p.holder()));
        for (Sandbox s : sandboxes.withMetadataKey(BUILD_METADATA)) {
            if (holders.contains(s.id().value())) continue;
            log.atWarn().addKeyValue("sandbox", s.id()).addKeyValue("template", s.metadata().get(BUILD_METADATA))
                    .log("deleting the sandbox of a template build the service's stop interrupted");
            try {
                sandboxes.delete(s.id().value());
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", s.id()).setCause(e).log("could not delete an interrupted build's sandbox");
            }
        }
    }

    private void run(Build build) {
        var request = build.request.orElseThrow();
        long start = System.nanoTime();
        Optional<Sandbox> sandbox = Optional.empty();
        boolean keepSandbox = false;
        try {
            var from = templates.awaitReadyImage(request.tenant(), request.from(), FROM_WAIT);
            var plan = BuildCache.plan(request, from, store);
            build.cachedSteps = plan.cachedSteps();
            build.log.line("# building template " + request.name() + " from " + request.from() + ": " + request.steps().size()
                    + " step(s), " + plan.cachedSteps() + " cached");
            for (int i = 0; i < plan.cachedSteps(); i++) build.log.line("# step " + (i + 1) + " (cached): " + request.steps().get(i).describe());
            var env = new LinkedHashMap<String, String>();
            sandbox = Optional.of(sandboxes.create(new SandboxSpec(plan.startTemplate(), Optional.empty(), Map.of(),
                    Map.of(BUILD_METADATA, request.name()), request.resources(), BUILD_LIFECYCLE, Optional.of(request.network().orElse(buildPolicy)),
                    request.tenant(),
                    List.of(), List.of(), runtime)));
            var settings = new StepSettings(from.config());
            for (int i = 0; i < request.steps().size(); i++) {
                var step = request.steps().get(i);
                settings.apply(step);
                if (i < plan.cachedSteps()) continue;
                build.step = i + 1;
                build.log.line("# step " + (i + 1) + "/" + request.steps().size() + ": " + step.describe());
                runStep(build, sandbox.get(), i, step, settings);
                if (step.changesFiles())
                    store.installTemplateFromRoot(sandbox.get().id(), new TemplateImage(plan.layerName(i), "1", clock.instant(), 0,
                            layerConfig(request)));
            }
            build.step = request.steps().size();
            var previous = store.template(request.name());
            String version = nextVersion(previous);
            Optional<TemplateConfig.Preboot> preboot = Optional.empty();
            if (request.preboot().isPresent())
                preboot = Optional.of(prebooter.boot(request, build.log, sandbox.get(), settings, version));
            var image = store.installTemplateFromRoot(sandbox.get().id(), new TemplateImage(request.name(), version,
                    clock.instant(), 0, new TemplateConfig(Optional.of(request.tenant().value()), Optional.of(request.from()),
                    settings.env, settings.workdir, settings.user, request.cmd(), Optional.empty(), preboot)));
            keepSandbox = preboot.isPresent();
            TemplateVersions.keep(store, sandboxes, image);
            previous.flatMap(p -> p.config().preboot()).ifPresent(prebooter::deleteHolder);
            BuildCache.deleteLayersOf(store, request.name(), plan.layerNames());
            build.result = image;
            build.log.line("# template " + request.name() + " version " + image.version() + " ready (" + image.sizeBytes() + " bytes of files)");
            log.atInfo().addKeyValue("template", request.name()).addKeyValue("version", image.version())
                    .addKeyValue("cachedSteps", plan.cachedSteps()).addKeyValue("steps", request.steps().size())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("template built");
        } catch (BuildFailed e) {
            build.failure = e.failure;
        } catch (RuntimeException | Error e) {
            String message = e instanceof StasisException se ? se.getMessage() : String.valueOf(e);
            build.log.line("# build failed: " + message);
            build.failure = new BuildReport.Failure(build.step, build.step == 0 ? "" : request.steps().get(build.step - 1).describe(),
                    Optional.empty(), message, build.log.tail(FAILURE_OUTPUT_BYTES));
            log.atWarn().addKeyValue("template", request.name()).setCause(e).log("template build failed");
        } finally {
            // A build the service's stop cuts short leaves its sandbox as a crash would: the next start deletes it.
            if (!keepSandbox && !closing) sandbox.ifPresent(s -> {
                try {
                    sandboxes.delete(s.id().value());
                } catch (RuntimeException e) {
                    log.atWarn().addKeyValue("sandbox", s.id()).setCause(e).log("could not delete a build's sandbox");
                }
            });
            build.endedAt = clock.instant();
            build.log.finish();
        }
    }

    private static TemplateConfig layerConfig(TemplateBuildRequest request) {
        return new TemplateConfig(Optional.of(request.tenant().value()), Optional.of(request.from()), Map.of(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.of(request.name()));
    }

    private void runStep(Build build, Sandbox sandbox, int index, BuildStep step, StepSettings settings) {
        ExecRequest command = switch (step) {
            case BuildStep.Run run -> new ExecRequest(List.of("/bin/sh", "-c", run.command()), Optional.of(settings.cwd()),
                    settings.env, Optional.empty(), run.timeout(), settings.user);
            case BuildStep.Copy copy -> CopyScript.request(copy, settings, build.request.orElseThrow().context().orElseThrow());
            case BuildStep.Workdir workdir -> new ExecRequest(List.of("mkdir", "-p", "--", workdir.path()), Optional.of("/"),
                    Map.of(), Optional.empty(), ExecRequest.DEFAULT_TIMEOUT);
            case BuildStep.Env env -> null;
            case BuildStep.User user -> null;
        };
        if (command == null) return;
        ExecResult result = exec.exec(sandbox.id().value(), command, (stream, data, offsetAfter) -> build.log.append(data));
        if (result.timedOut() || result.exit().exitCode() != 0) {
            String why = result.timedOut() ? "timed out" : result.exit().signal().map(s -> "was killed by " + s)
                    .orElse("exited with " + result.exit().exitCode());
            build.log.line("# step " + (index + 1) + " failed: " + why);
            throw new BuildFailed(new BuildReport.Failure(index + 1, step.describe(), Optional.of(result.exit().exitCode()),
                    "step " + (index + 1) + " (" + step.describe() + ") " + why, build.log.tail(FAILURE_OUTPUT_BYTES)));
        }
    }

    /** Version numbers count up from 1; a template a recipe made (not numbered) is followed by 1. */
    static String nextVersion(Optional<TemplateImage> previous) {
        try {
            return previous.map(p -> Long.toString(Long.parseLong(p.version()) + 1)).orElse("1");
        } catch (NumberFormatException e) {
            return "1";
        }
    }

    /** The environment, working directory and user the steps so far have set. */
    static final class StepSettings {
        final Map<String, String> env = new LinkedHashMap<>();
        Optional<String> workdir;
        Optional<String> user;

        /** Starting from what the base template's own build ended with, as a Dockerfile's FROM does. */
        StepSettings(TemplateConfig base) {
            env.putAll(base.env());
            workdir = base.workdir();
            user = base.user();
        }

        void apply(BuildStep step) {
            switch (step) {
                case BuildStep.Env e -> env.putAll(e.vars());
                case BuildStep.Workdir w -> workdir = Optional.of(w.path());
                case BuildStep.User u -> user = Optional.of(u.user());
                case BuildStep.Run r -> { }
                case BuildStep.Copy c -> { }
            }
        }

        String cwd() {
            return workdir.orElse("/");
        }

        /** A relative path taken from the working directory. */
        String absolute(String path) {
            if (path.startsWith("/")) return path;
            String dir = cwd();
            return (dir.endsWith("/") ? dir : dir + "/") + path;
        }
    }
}
