package io.stasis.core.template;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.exec.ExecResult;
import io.stasis.core.exec.ExecService;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.process.ProcessRequest;
import io.stasis.core.process.ProcessService;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.tenant.TenantId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
    private static final int FAILURE_OUTPUT_BYTES = 4096;
    private static final LifecyclePolicy BUILD_LIFECYCLE = new LifecyclePolicy(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.of(Duration.ofHours(1)), Optional.of(Duration.ofHours(12)), false);

    /** How often a pre-booted build asks its ready command. */
    private static final Duration READY_POLL = Duration.ofMillis(250);
    /** A holder sandbox waits stopped, with nothing on its idle ladder: its checkpoint is the template's running state. */
    private static final LifecyclePolicy HOLDER_LIFECYCLE = new LifecyclePolicy(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty(), Optional.empty(), false);

    /** The services a build drives. */
    public record Services(SandboxService sandboxes, ExecService exec, ProcessService processes, CheckpointService checkpoints,
                           LifecycleService lifecycle) {
    }

    private final RootStore store;
    private final TemplateService templates;
    private final SandboxService sandboxes;
    private final ExecService exec;
    private final ProcessService processes;
    private final CheckpointService checkpoints;
    private final LifecycleService lifecycle;
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
        this.processes = services.processes();
        this.checkpoints = services.checkpoints();
        this.lifecycle = services.lifecycle();
        this.clock = clock;
    }

    /** One build: its request, output and progress. */
    public static final class Build {
        private final TemplateBuildRequest request;
        private final BuildLog log = new BuildLog(LOG_BYTES);
        private final Instant startedAt;
        private volatile int step;
        private volatile int cachedSteps;
        private volatile Instant endedAt;
        private volatile BuildReport.Failure failure;
        private volatile TemplateImage result;

        Build(TemplateBuildRequest request, Instant startedAt) {
            this.request = request;
            this.startedAt = startedAt;
        }

        public TemplateBuildRequest request() {
            return request;
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
            return new BuildReport(request.from(), step, request.steps().size(), cachedSteps, startedAt, Optional.ofNullable(endedAt),
                    Optional.ofNullable(failure));
        }
    }

    /**
     * Starts a build in the background and returns it. {@code name_taken} if the name is a
     * service template's or another tenant's; {@code invalid_state} while another build of it runs;
     * {@code template_not_found} for an unknown {@code from}.
     */
    public Build start(TemplateBuildRequest request) {
        if (templates.isRecipe(request.name())) throw StasisException.nameTaken(request.name());
        store.template(request.name()).ifPresent(existing -> {
            if (!existing.config().tenant().equals(Optional.of(request.tenant().value()))) throw StasisException.nameTaken(request.name());
        });
        templates.requireVisible(request.tenant(), request.from());
        var build = new Build(request, clock.instant());
        var running = builds.compute(request.name(), (name, previous) -> previous != null && previous.running() ? previous : build);
        if (running != build)
            throw new StasisException(ErrorCode.INVALID_STATE, "template '" + request.name() + "' is being built; wait for that build to end",
                    Map.of("template", request.name()));
        if (closing) throw new StasisException(ErrorCode.HOST_BUSY, "the service is stopping");
        var thread = Thread.ofVirtual().name("template-build-" + request.name()).unstarted(() -> {
            try {
                run(build);
            } finally {
                buildThreads.remove(Thread.currentThread());
            }
        });
        buildThreads.add(thread);
        thread.start();
        return build;
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

    /** The latest build of a template this tenant sees, if one ran since the service started. */
    public Optional<Build> latest(TenantId tenant, String name) {
        return Optional.ofNullable(builds.get(name)).filter(b -> b.request.tenant().equals(tenant));
    }

    /** Every build of the tenant's that ran since the service started, latest of each template. */
    public List<Build> of(TenantId tenant) {
        return builds.values().stream().filter(b -> b.request.tenant().equals(tenant)).toList();
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
        image.get().config().preboot().ifPresent(this::deleteHolder);
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
        var request = build.request;
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
            var settings = new StepSettings();
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
            if (request.preboot().isPresent()) preboot = Optional.of(preboot(build, sandbox.get(), settings, version));
            var image = store.installTemplateFromRoot(sandbox.get().id(), new TemplateImage(request.name(), version,
                    clock.instant(), 0, new TemplateConfig(Optional.of(request.tenant().value()), Optional.of(request.from()),
                    settings.env, settings.workdir, settings.user, request.cmd(), Optional.empty(), preboot)));
            keepSandbox = preboot.isPresent();
            previous.flatMap(p -> p.config().preboot()).ifPresent(this::deleteHolder);
            BuildCache.deleteLayersOf(store, request.name(), plan.layerNames());
            build.result = image;
            build.log.line("# template " + request.name() + " version " + image.version() + " ready (" + image.sizeBytes() + " bytes of files)");
            log.atInfo().addKeyValue("template", request.name()).addKeyValue("version", image.version())
                    .addKeyValue("cachedSteps", plan.cachedSteps()).addKeyValue("steps", request.steps().size())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("template built");
        } catch (StepFailed e) {
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

    /**
     * Starts the pre-boot command, waits until the ready command exits 0, and keeps the sandbox's
     * running state as a memory checkpoint; the sandbox is then stopped and kept as the checkpoint's holder.
     */
    private TemplateConfig.Preboot preboot(Build build, Sandbox sandbox, StepSettings settings, String version) {
        var asked = build.request.preboot().orElseThrow();
        build.log.line("# starting: " + asked.startCmd());
        var process = processes.start(sandbox.id().value(), new ProcessRequest(List.of("/bin/sh", "-c", asked.startCmd()),
                Optional.of(settings.cwd()), settings.env, false, Optional.empty(), Optional.of("template-start"), false, Optional.empty(),
                settings.user));
        build.log.line("# waiting until ready: " + asked.readyCmd());
        long deadline = System.nanoTime() + asked.readyTimeout().toNanos();
        ExecResult last = null;
        while (true) {
            last = exec.exec(sandbox.id().value(), new ExecRequest(List.of("/bin/sh", "-c", asked.readyCmd()), Optional.of(settings.cwd()),
                    settings.env, Optional.empty(), Duration.ofSeconds(30), settings.user));
            if (!last.timedOut() && last.exit().exitCode() == 0) break;
            var info = processes.list(sandbox.id().value()).stream().filter(p -> p.pid() == process.pid()).findFirst();
            boolean exited = info.isPresent() && !info.get().running();
            if (exited || System.nanoTime() > deadline) {
                var output = processes.output(sandbox.id().value(), process.pid(), 0, 0, FAILURE_OUTPUT_BYTES);
                String started = new String(output.stdout(), java.nio.charset.StandardCharsets.UTF_8)
                        + new String(output.stderr(), java.nio.charset.StandardCharsets.UTF_8);
                String ready = new String(last.stdout(), java.nio.charset.StandardCharsets.UTF_8)
                        + new String(last.stderr(), java.nio.charset.StandardCharsets.UTF_8);
                build.log.append(started.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                String why = exited ? "the start command exited (" + info.get().exit().map(e -> "code " + e.exitCode()).orElse("?")
                        + ") before it was ready" : "not ready after " + asked.readyTimeout().toSeconds() + " s";
                build.log.line("# pre-boot failed: " + why);
                throw new StepFailed(new BuildReport.Failure(build.request.steps().size() + 1, "START " + asked.startCmd(),
                        Optional.of(last.exit().exitCode()), "the pre-boot failed: " + why + "; the ready command last exited "
                        + last.exit().exitCode(), tail("start command output:\n" + started + "\nready command output:\n" + ready)));
            }
            sleep(READY_POLL);
        }
        build.log.line("# ready; keeping its running state");
        var checkpoint = checkpoints.create(sandbox.id(), Optional.of("template " + build.request.name() + " v" + version), true);
        lifecycle.stop(sandbox.id(), LifecycleService.Reason.API);
        lifecycle.updatePolicy(sandbox.id(), HOLDER_LIFECYCLE);
        return new TemplateConfig.Preboot(asked.startCmd(), asked.readyCmd(), checkpoint.id().value(), sandbox.id().value());
    }

    private static String tail(String text) {
        return text.length() <= FAILURE_OUTPUT_BYTES ? text : text.substring(text.length() - FAILURE_OUTPUT_BYTES);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisException(ErrorCode.INTERNAL, "interrupted while waiting for the pre-boot to be ready");
        }
    }

    /** Deletes the sandbox that held an older version's running state (its checkpoint goes with it). */
    private void deleteHolder(TemplateConfig.Preboot preboot) {
        try {
            sandboxes.delete(preboot.holder());
        } catch (StasisException e) {
            if (e.code() != ErrorCode.SANDBOX_NOT_FOUND)
                log.atWarn().addKeyValue("sandbox", preboot.holder()).setCause(e).log("could not delete a pre-booted template's holder");
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
            case BuildStep.Copy copy -> CopyScript.request(copy, settings, build.request.context().orElseThrow());
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
            throw new StepFailed(new BuildReport.Failure(index + 1, step.describe(), Optional.of(result.exit().exitCode()),
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
        Optional<String> workdir = Optional.empty();
        Optional<String> user = Optional.empty();

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

    private static final class StepFailed extends RuntimeException {
        final BuildReport.Failure failure;

        StepFailed(BuildReport.Failure failure) {
            super(failure.message(), null, false, false);
            this.failure = failure;
        }
    }
}
