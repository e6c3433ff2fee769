package io.stasis.core.template;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.tenant.TenantId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A template to build: {@code steps} run on template {@code from} in a sandbox with these resources
 * and this egress policy (empty: the service's default), for {@code tenant}.
 *
 * @param cmd     the command its sandboxes are meant to start (a Dockerfile's CMD), recorded with the template
 * @param context a tar archive (plain or gzip) that {@link BuildStep.Copy} steps copy from
 * @param preboot a process to start once the steps are done and keep running in the template
 */
public record TemplateBuildRequest(String name, String from, List<BuildStep> steps, Optional<List<String>> cmd, Optional<byte[]> context,
                                   Resources resources, Optional<NetworkPolicy> network, TenantId tenant, Optional<Preboot> preboot) {

    /**
     * Pre-booting: after the steps, {@code startCmd} is started in the background (a shell command,
     * run as the steps are), {@code readyCmd} is run until it exits 0 (at most {@code readyTimeout}),
     * and a memory checkpoint is taken: each sandbox of the template is a fork of it, with the process
     * running and ready.
     */
    public record Preboot(String startCmd, String readyCmd, Duration readyTimeout) {
        public static final Duration DEFAULT_READY_TIMEOUT = Duration.ofMinutes(5);
        public static final Duration MAX_READY_TIMEOUT = Duration.ofHours(1);

        public Preboot {
            requireCommand("startCmd", startCmd);
            requireCommand("readyCmd", readyCmd);
            if (readyTimeout.isNegative() || readyTimeout.isZero() || readyTimeout.compareTo(MAX_READY_TIMEOUT) > 0)
                throw StasisException.invalid("readyTimeoutMs", "must be between 1 and " + MAX_READY_TIMEOUT.toMillis());
        }
    }

    /** The names callers give; a leading {@code _} is kept for a build's cached steps. */
    public static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
    public static final int MAX_STEPS = 256;
    public static final int MAX_CONTEXT_BYTES = 32 << 20;

    public TemplateBuildRequest {
        requireName("name", name);
        requireName("from", from);
        steps = List.copyOf(steps);
        if (steps.size() > MAX_STEPS) throw StasisException.invalid("steps", "at most " + MAX_STEPS + " steps");
        cmd = cmd.map(List::copyOf);
        if (cmd.isPresent() && cmd.get().isEmpty()) throw StasisException.invalid("cmd", "must name a program");
        if (context.isPresent() && context.get().length > MAX_CONTEXT_BYTES)
            throw new StasisException(ErrorCode.PAYLOAD_TOO_LARGE, "the context is larger than " + MAX_CONTEXT_BYTES + " bytes",
                    Map.of("field", "context", "limitBytes", MAX_CONTEXT_BYTES));
        if (context.isEmpty() && steps.stream().anyMatch(s -> s instanceof BuildStep.Copy))
            throw StasisException.invalid("context", "a copy step copies from the build's context: send one (a tar archive)");
        Objects.requireNonNull(resources);
        Objects.requireNonNull(network);
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(preboot);
    }

    private static void requireCommand(String field, String command) {
        if (command == null || command.isBlank() || command.length() > BuildStep.MAX_COMMAND_BYTES || command.indexOf('\0') >= 0)
            throw StasisException.invalid(field, "must be a shell command of at most " + BuildStep.MAX_COMMAND_BYTES + " characters");
    }

    static void requireName(String field, String name) {
        if (name == null || !NAME.matcher(name).matches())
            throw StasisException.invalid(field, "'" + name + "' is not a template name (" + NAME.pattern() + ")");
    }
}
