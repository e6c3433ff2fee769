package io.stasis.core.template;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.EnvVars;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * One step of a template build. {@link Run} and {@link Copy} change the files, and each leaves a
 * cached snapshot; {@link Env}, {@link Workdir} and {@link User} change how the later steps run
 * (and what the template's sandboxes get by default).
 */
public sealed interface BuildStep {
    Duration DEFAULT_RUN_TIMEOUT = Duration.ofMinutes(30);
    Duration MAX_RUN_TIMEOUT = Duration.ofHours(6);
    int MAX_COMMAND_BYTES = 64 * 1024;

    /** How the step reads in a log or an error, e.g. {@code RUN apt-get install -y git}. */
    String describe();

    /**
     * The step as its cache key sees it: two steps with the same text do the same thing given the
     * same files and settings before them.
     */
    String cacheText();

    /** Whether the step changes the files (and so leaves a cached snapshot). */
    default boolean changesFiles() {
        return false;
    }

    /** A shell command ({@code /bin/sh -c}) run as the build's user, in its working directory, with its environment. */
    record Run(String command, Duration timeout) implements BuildStep {
        public Run {
            if (command == null || command.isBlank()) throw StasisException.invalid("steps.run", "must be a shell command");
            if (command.length() > MAX_COMMAND_BYTES || command.indexOf('\0') >= 0)
                throw StasisException.invalid("steps.run", "must be at most " + MAX_COMMAND_BYTES + " characters, without NUL");
            if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_RUN_TIMEOUT) > 0)
                throw StasisException.invalid("steps.timeoutMs", "must be between 1 and " + MAX_RUN_TIMEOUT.toMillis());
        }

        public Run(String command) {
            this(command, DEFAULT_RUN_TIMEOUT);
        }

        @Override
        public String describe() {
            return "RUN " + command;
        }

        /** The timeout is not part of it: a longer wait does not change what the command makes. */
        @Override
        public String cacheText() {
            return "run\0" + command;
        }

        @Override
        public boolean changesFiles() {
            return true;
        }
    }

    /** Variables set for the later steps and for the template's sandboxes. */
    record Env(Map<String, String> vars) implements BuildStep {
        public Env {
            if (vars == null || vars.isEmpty()) throw StasisException.invalid("steps.env", "must set at least one variable");
            vars = Map.copyOf(EnvVars.validateEnv("steps.env", vars));
        }

        @Override
        public String describe() {
            var sb = new StringBuilder("ENV");
            new TreeMap<>(vars).forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
            return sb.toString();
        }

        @Override
        public String cacheText() {
            var sb = new StringBuilder("env");
            new TreeMap<>(vars).forEach((k, v) -> sb.append('\0').append(k).append('\0').append(v));
            return sb.toString();
        }
    }

    /** The working directory of the later steps (created if missing), absolute. */
    record Workdir(String path) implements BuildStep {
        public Workdir {
            if (path == null || !path.startsWith("/") || path.indexOf('\0') >= 0 || path.length() > 4096)
                throw StasisException.invalid("steps.workdir", "must be an absolute path, was '" + path + "'");
        }

        @Override
        public String describe() {
            return "WORKDIR " + path;
        }

        @Override
        public String cacheText() {
            return "workdir\0" + path;
        }

        /** It creates the directory, as Docker's WORKDIR does. */
        @Override
        public boolean changesFiles() {
            return true;
        }
    }

    /** The user the later steps run as: a name from the template's {@code /etc/passwd}, or a numeric uid. */
    record User(String user) implements BuildStep {
        public User {
            if (user == null || !user.matches("[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?"))
                throw StasisException.invalid("steps.user", "must be a user name or uid (optionally :group), was '" + user + "'");
        }

        @Override
        public String describe() {
            return "USER " + user;
        }

        @Override
        public String cacheText() {
            return "user\0" + user;
        }
    }

    /**
     * Copies {@code src} (a file or a directory, relative to the build's context) to {@code dest} in
     * the sandbox: a directory's contents go into {@code dest}; a file goes to {@code dest}, or into
     * it when {@code dest} ends with {@code /}. A relative {@code dest} is taken from the working directory.
     *
     * @param contextDigest what {@code src} holds in the context, so that a change there invalidates the step
     */
    record Copy(String src, String dest, String contextDigest) implements BuildStep {
        public Copy {
            if (src == null || src.isEmpty() || src.startsWith("/") || src.indexOf('\0') >= 0
                    || java.util.Arrays.asList(src.split("/")).contains(".."))
                throw StasisException.invalid("steps.copy.src", "must be a path inside the context, without '..', was '" + src + "'");
            if (dest == null || dest.isEmpty() || dest.indexOf('\0') >= 0)
                throw StasisException.invalid("steps.copy.dest", "must be a path in the sandbox");
        }

        public Copy(String src, String dest) {
            this(src, dest, "");
        }

        public Copy withDigest(String digest) {
            return new Copy(src, dest, digest);
        }

        @Override
        public String describe() {
            return "COPY " + src + " " + dest;
        }

        @Override
        public String cacheText() {
            return "copy\0" + src + "\0" + dest + "\0" + contextDigest;
        }

        @Override
        public boolean changesFiles() {
            return true;
        }
    }
}
