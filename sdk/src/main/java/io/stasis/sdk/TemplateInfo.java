package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A template sandboxes are created from: one of the service's ({@code tiny}, {@code base}) or
 * one the tenant built ({@link Templates#build}). Fields the server leaves out are null (empty for
 * {@code env} and {@code cmd}).
 *
 * @param name        e.g. {@code tiny}, {@code base}
 * @param description what is in it (empty for a built one)
 * @param status      {@code ready}, {@code building}, {@code failed} or {@code pending} (built when first used);
 *                    a built template is {@code building} while its latest build runs and {@code failed}
 *                    when that build failed, even when an earlier version is still installed
 * @param version     the installed version, or null before the first successful build
 * @param builtAt     when the installed version was built, or null
 * @param sizeBytes   its size on disk, or null when unknown
 * @param progress    0..1 while a service template builds, when known; else null
 * @param message     what a service template's build is doing, or why it failed; else null
 * @param from        the template a built one was built on, or null
 * @param env         the environment its build set, which its sandboxes start with
 * @param workdir     the working directory its build set, or null
 * @param cmd         the command its sandboxes are meant to start (a Dockerfile's CMD), or empty
 * @param startCmd    for a pre-booted template, the command running in each of its sandboxes from the start; else null
 * @param readyCmd    for a pre-booted template, the command that said it was ready; else null
 * @param build       its latest build, when one ran since the service started; else null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TemplateInfo(String name, String description, String status, String version, Instant builtAt,
                           Long sizeBytes, Double progress, String message, String from,
                           @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> env, String workdir,
                           @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> cmd, String startCmd, String readyCmd,
                           Build build) {
    public TemplateInfo {
        env = SandboxInfo.copy(env);
        cmd = cmd == null ? List.of() : List.copyOf(cmd);
    }

    /** A template as servers before template builds describe it. */
    public TemplateInfo(String name, String description, String status, String version, Instant builtAt, Long sizeBytes,
                        Double progress, String message) {
        this(name, description, status, version, builtAt, sizeBytes, progress, message, null, null, null, null, null, null, null);
    }

    @JsonIgnore
    public boolean isReady() {
        return "ready".equals(status);
    }

    @JsonIgnore
    public boolean isBuilding() {
        return "building".equals(status);
    }

    @JsonIgnore
    public boolean isFailed() {
        return "failed".equals(status);
    }

    /** Whether its sandboxes start as memory forks with {@link #startCmd} already running and ready. */
    @JsonIgnore
    public boolean isPrebooted() {
        return startCmd != null;
    }

    /** Why its latest build failed, or null when it did not (or there is none since the service started). */
    public BuildFailure failure() {
        return build == null ? null : build.failure();
    }

    /**
     * A template's latest build.
     *
     * @param status      {@code building}, {@code ready} or {@code failed}
     * @param from        the template it builds on
     * @param step        the step running (1-based) or, once ended, the last one reached; 0 before the first
     * @param steps       how many steps it has
     * @param cachedSteps how many leading steps came from the server's cache instead of running
     * @param endedAt     when it ended, or null while it runs
     * @param failure     why it failed, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Build(String status, String from, int step, int steps, int cachedSteps, Instant startedAt, Instant endedAt,
                        BuildFailure failure) {
        @JsonIgnore
        public boolean isRunning() {
            return "building".equals(status);
        }
    }

    /**
     * Why a build failed.
     *
     * @param step        the failing step (1-based; 0 when it failed outside a step, e.g. its base was missing)
     * @param instruction the step as a Dockerfile would write it ({@code RUN make}), empty outside a step
     * @param exitCode    the step's command's exit code, or null when it did not exit (timed out, or no command)
     * @param message     what went wrong, for people
     * @param output      the last part (4 KiB) of the build's output
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record BuildFailure(int step, String instruction, Integer exitCode, String message, String output) {
        public BuildFailure {
            if (output == null) output = "";
        }

        /** The last {@code lines} lines of {@link #output}, without a trailing newline. */
        public String outputTail(int lines) {
            if (lines <= 0) return "";
            String text = output.endsWith("\n") ? output.substring(0, output.length() - 1) : output;
            int at = text.length();
            for (int found = 0; found < lines; found++) {
                at = text.lastIndexOf('\n', at - 1);
                if (at < 0) return text;
            }
            return text.substring(at + 1);
        }
    }
}
