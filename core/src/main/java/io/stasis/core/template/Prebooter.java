package io.stasis.core.template;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.exec.ExecResult;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.process.ProcessRequest;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.spi.TemplateConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pre-boots a template: starts its process in the build's sandbox, waits until it is ready, keeps
 * the sandbox's running state as a memory checkpoint, and keeps the stopped sandbox as the
 * checkpoint's holder (its network slot, which forks inherit, goes with it).
 */
final class Prebooter {
    private static final Logger log = LoggerFactory.getLogger(Prebooter.class);
    /** How often the ready command is asked. */
    private static final Duration READY_POLL = Duration.ofMillis(250);
    private static final Duration READY_CMD_TIMEOUT = Duration.ofSeconds(30);
    /** A holder waits stopped, with nothing on its idle ladder: its checkpoint is the template's running state. */
    private static final LifecyclePolicy HOLDER_LIFECYCLE = new LifecyclePolicy(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty(), Optional.empty(), false, Optional.empty());

    private final TemplateBuilds.Services services;

    Prebooter(TemplateBuilds.Services services) {
        this.services = services;
    }

    /** What the template records; {@link BuildFailed} if the process ends or is not ready in time. */
    TemplateConfig.Preboot boot(TemplateBuildRequest request, BuildLog buildLog, Sandbox sandbox, TemplateBuilds.StepSettings settings,
                                String version) {
        var asked = request.preboot().orElseThrow();
        String id = sandbox.id().value();
        buildLog.line("# starting: " + asked.startCmd());
        var process = services.processes().start(id, new ProcessRequest(List.of("/bin/sh", "-c", asked.startCmd()),
                Optional.of(settings.cwd()), settings.env, false, Optional.empty(), Optional.of("template-start"), false, Optional.empty(),
                settings.user));
        buildLog.line("# waiting until ready: " + asked.readyCmd());
        long deadline = System.nanoTime() + asked.readyTimeout().toNanos();
        while (true) {
            ExecResult ready = services.exec().exec(id, new ExecRequest(List.of("/bin/sh", "-c", asked.readyCmd()),
                    Optional.of(settings.cwd()), settings.env, Optional.empty(), READY_CMD_TIMEOUT, settings.user));
            if (!ready.timedOut() && ready.exit().exitCode() == 0) break;
            var info = services.processes().list(id).stream().filter(p -> p.pid() == process.pid()).findFirst();
            boolean exited = info.isPresent() && !info.get().running();
            if (exited || System.nanoTime() > deadline) {
                var output = services.processes().output(id, process.pid(), 0, 0, TemplateBuilds.FAILURE_OUTPUT_BYTES);
                String started = text(output.stdout()) + text(output.stderr());
                buildLog.append(started.getBytes(StandardCharsets.UTF_8));
                String why = exited ? "the start command exited (" + info.get().exit().map(e -> "code " + e.exitCode()).orElse("?")
                        + ") before it was ready" : "not ready after " + asked.readyTimeout().toSeconds() + " s";
                buildLog.line("# pre-boot failed: " + why);
                throw new BuildFailed(new BuildReport.Failure(request.steps().size() + 1, "START " + asked.startCmd(),
                        Optional.of(ready.exit().exitCode()), "the pre-boot failed: " + why + "; the ready command last exited "
                        + ready.exit().exitCode(), tail("start command output:\n" + started + "\nready command output:\n"
                        + text(ready.stdout()) + text(ready.stderr()))));
            }
            sleep();
        }
        buildLog.line("# ready; keeping its running state");
        var checkpoint = services.checkpoints().create(sandbox.id(), Optional.of("template " + request.name() + " v" + version), true);
        services.lifecycle().stop(sandbox.id(), LifecycleService.Reason.API);
        services.lifecycle().updatePolicy(sandbox.id(), HOLDER_LIFECYCLE);
        return new TemplateConfig.Preboot(asked.startCmd(), asked.readyCmd(), checkpoint.id().value(), id);
    }

    /** Deletes the sandbox that held a version's running state (its checkpoint goes with it). */
    void deleteHolder(TemplateConfig.Preboot preboot) {
        try {
            services.sandboxes().delete(preboot.holder());
        } catch (StasisException e) {
            if (e.code() != ErrorCode.SANDBOX_NOT_FOUND)
                log.atWarn().addKeyValue("sandbox", preboot.holder()).setCause(e).log("could not delete a pre-booted template's holder");
        }
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static String tail(String text) {
        int max = TemplateBuilds.FAILURE_OUTPUT_BYTES;
        return text.length() <= max ? text : text.substring(text.length() - max);
    }

    private static void sleep() {
        try {
            Thread.sleep(READY_POLL);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisException(ErrorCode.INTERNAL, "interrupted while waiting for the pre-boot to be ready");
        }
    }
}
