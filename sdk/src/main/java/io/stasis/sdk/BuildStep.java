package io.stasis.sdk;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * One step of a template build ({@link TemplateBuildRequest}): the steps run in order in a sandbox
 * of the build's own, as a Dockerfile's instructions do. Steps that change files ({@link Run},
 * {@link Copy}, {@link Workdir}) leave a cached snapshot on the server, so a later build whose
 * first steps are the same starts after them.
 *
 * <pre>{@code
 * List<BuildStep> steps = List.of(
 *         new BuildStep.Env(Map.of("PIP_NO_CACHE_DIR", "1")),
 *         new BuildStep.Workdir("/app"),
 *         new BuildStep.Copy("requirements.txt", "requirements.txt"),   // from the build's context
 *         new BuildStep.Run("pip install -r requirements.txt", Duration.ofMinutes(20)));
 * }</pre>
 */
public sealed interface BuildStep permits BuildStep.Run, BuildStep.Env, BuildStep.Workdir, BuildStep.User, BuildStep.Copy {
    /**
     * A shell command ({@code /bin/sh -c}) in the working directory with the environment set so far.
     * A command that exits with anything but 0, or outlives its timeout, fails the build.
     *
     * @param timeout how long it may take, or null for the server's default (30 min; at most 6 h)
     */
    record Run(String command, Duration timeout) implements BuildStep {
        public Run {
            requireText(command, "run");
            if (timeout != null && timeout.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("a run step's timeout must be at least 1 ms, was " + timeout);
            }
        }

        public Run(String command) {
            this(command, null);
        }
    }

    /** Sets environment variables for the steps after it and for the template's sandboxes. */
    record Env(Map<String, String> vars) implements BuildStep {
        public Env {
            Objects.requireNonNull(vars, "vars");
            if (vars.isEmpty()) throw new IllegalArgumentException("an env step sets at least one variable");
            vars.forEach((key, value) -> {
                requireText(key, "env variable name");
                Objects.requireNonNull(value, () -> "env variable " + key + " has no value");
            });
            vars = SandboxInfo.copy(vars);
        }
    }

    /** The directory later steps run in (created if missing), and the template's working directory. */
    record Workdir(String path) implements BuildStep {
        public Workdir {
            requireText(path, "workdir");
        }
    }

    /** The user later run steps and the pre-boot run as: a user of the template (name or uid, optionally {@code :group}). */
    record User(String user) implements BuildStep {
        public User {
            requireText(user, "user");
        }
    }

    /**
     * Copies {@code src}, a path in the build's context ({@link TemplateBuildRequest.Builder#context}),
     * to {@code dest}, an absolute path or one relative to the working directory. A directory's
     * content is copied into {@code dest}; {@code .} is the whole context.
     */
    record Copy(String src, String dest) implements BuildStep {
        public Copy {
            requireText(src, "copy source");
            requireText(dest, "copy destination");
        }
    }

    private static void requireText(String value, String what) {
        if (value == null || value.isEmpty()) throw new IllegalArgumentException(what + " must not be empty");
    }
}
