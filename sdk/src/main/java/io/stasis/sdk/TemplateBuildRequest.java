package io.stasis.sdk;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The body of {@code POST /v1/templates}: a template built from steps on another template, or
 * from a Dockerfile (FROM, RUN, COPY, ENV, WORKDIR, USER, CMD). The build runs in a sandbox of its
 * own with these resources and this network policy (without one it may reach only what the
 * server's operator allows builds, by default the host's own package mirrors: give one for steps
 * that download from elsewhere).
 *
 * <pre>{@code
 * TemplateInfo started = client.templates().build(TemplateBuildRequest.builder("py-app")
 *         .from("base")
 *         .env("PIP_NO_CACHE_DIR", "1")
 *         .workdir("/app")
 *         .copy("requirements.txt", "requirements.txt")
 *         .run("pip install -r requirements.txt", Duration.ofMinutes(20))
 *         .copy(".", ".")
 *         .cmd("python3", "main.py")
 *         .contextDirectory(Path.of("."))                      // what the copy steps copy from
 *         .network(NetworkPolicy.builder().allow("pypi.org", "files.pythonhosted.org").build())
 *         .build());
 *
 * // Pre-booted: every sandbox of it starts as a memory fork with the server already up and ready.
 * TemplateBuildRequest warm = TemplateBuildRequest.builder("py-api").from("py-app")
 *         .preboot("python3 -m http.server 8000", "curl -sf http://127.0.0.1:8000/")
 *         .build();
 *
 * TemplateBuildRequest fromDockerfile = TemplateBuildRequest.builder("py-app")
 *         .dockerfile(Files.readString(Path.of("Dockerfile")))
 *         .contextDirectory(Path.of("."))
 *         .build();
 * }</pre>
 */
public final class TemplateBuildRequest {
    /** The largest context the server takes: 32 MiB as sent (compressed when it is a tar.gz). */
    public static final int MAX_CONTEXT_BYTES = 32 << 20;

    private final String name;
    private final String from;
    private final String dockerfile;
    private final List<BuildStep> steps;
    private final List<String> cmd;
    private final byte[] context;
    private final String startCmd;
    private final String readyCmd;
    private final Duration readyTimeout;
    private final Resources resources;
    private final NetworkPolicy network;

    private TemplateBuildRequest(Builder b) {
        this.name = b.name;
        this.from = b.from;
        this.dockerfile = b.dockerfile;
        this.steps = List.copyOf(b.steps);
        this.cmd = b.cmd == null ? null : List.copyOf(b.cmd);
        this.context = b.context;
        this.startCmd = b.startCmd;
        this.readyCmd = b.readyCmd;
        this.readyTimeout = b.readyTimeout;
        this.resources = b.resources;
        this.network = b.network;
    }

    /** A builder for the template {@code name} (1-63 of a-z 0-9 . _ -, starting with a letter or digit). */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    public String name() {
        return name;
    }

    /** The template the steps run on, or null with a Dockerfile (its FROM names it). */
    public String from() {
        return from;
    }

    /** The Dockerfile's text, or null for a build from steps. */
    public String dockerfile() {
        return dockerfile;
    }

    public List<BuildStep> steps() {
        return steps;
    }

    /** The command the template's sandboxes are meant to start, or null for none (a Dockerfile's CMD otherwise). */
    public List<String> cmd() {
        return cmd;
    }

    /** The context archive (tar or tar.gz) copy steps copy from, or null for none. */
    public byte[] context() {
        return context == null ? null : context.clone();
    }

    /** How many bytes of context are sent (0 without one). */
    public int contextBytes() {
        return context == null ? 0 : context.length;
    }

    /** The command a pre-booted template's sandboxes start with, running, or null; see {@link Builder#preboot}. */
    public String startCmd() {
        return startCmd;
    }

    /** The command that says a pre-booted template's process is ready (exit 0), or null. */
    public String readyCmd() {
        return readyCmd;
    }

    /** How long the build waits for {@link #readyCmd} to succeed, or null for the server's default (5 min). */
    public Duration readyTimeout() {
        return readyTimeout;
    }

    public Resources resources() {
        return resources;
    }

    public NetworkPolicy network() {
        return network;
    }

    /** The JSON body, the context in base64. */
    TemplateWire.Body toBody() {
        return new TemplateWire.Body(name, from, dockerfile, dockerfile != null ? null : steps.stream().map(TemplateWire::step).toList(),
                cmd, context == null ? null : Base64.getEncoder().encodeToString(context), startCmd, readyCmd,
                readyTimeout == null ? null : readyTimeout.toMillis(), isEmpty(resources) ? null : resources, network);
    }

    private static boolean isEmpty(Resources r) {
        return r == null || r.cpus() == null && r.memoryMb() == null && r.pids() == null && r.diskMb() == null;
    }

    @Override
    public String toString() {
        return "TemplateBuildRequest[" + name + (dockerfile != null ? " from a Dockerfile" : " from " + from + ", " + steps.size() + " steps")
                + (context == null ? "" : ", " + context.length + " bytes of context") + "]";
    }

    /**
     * Builds a {@link TemplateBuildRequest}: either {@link #from} with steps (and optionally
     * {@link #cmd}), or a {@link #dockerfile}. Steps are kept in the order they are added.
     */
    public static final class Builder {
        private final String name;
        private String from;
        private String dockerfile;
        private final List<BuildStep> steps = new ArrayList<>();
        private List<String> cmd;
        private byte[] context;
        private String startCmd;
        private String readyCmd;
        private Duration readyTimeout;
        private Resources resources;
        private NetworkPolicy network;

        private Builder(String name) {
            if (name == null || name.isBlank()) throw new IllegalArgumentException("a template build needs a name");
            this.name = name;
        }

        /** The template to build on ({@code tiny}, {@code base}, or one of yours). */
        public Builder from(String template) {
            if (dockerfile != null) throw new IllegalArgumentException("a dockerfile was already set: its FROM names the template to build on");
            if (template == null || template.isBlank()) throw new IllegalArgumentException("from must name a template");
            this.from = template;
            return this;
        }

        /**
         * Builds from a Dockerfile's text instead of {@link #from} and steps: its FROM, RUN, COPY,
         * ENV, WORKDIR, USER and CMD (LABEL, EXPOSE and MAINTAINER are ignored, other instructions refused).
         */
        public Builder dockerfile(String text) {
            Objects.requireNonNull(text, "text");
            if (from != null) throw new IllegalArgumentException("from was already set to '" + from + "': a Dockerfile names its own FROM");
            if (!steps.isEmpty()) throw new IllegalArgumentException(steps.size() + " steps were already added: a Dockerfile has its own");
            if (cmd != null) throw new IllegalArgumentException("cmd was already set to " + cmd + ": a Dockerfile has its own CMD");
            this.dockerfile = text;
            return this;
        }

        /** Adds a step. */
        public Builder step(BuildStep step) {
            Objects.requireNonNull(step, "step");
            if (dockerfile != null) throw new IllegalArgumentException("a dockerfile was already set: it holds the build's steps");
            steps.add(step);
            return this;
        }

        /** Adds these steps, in order. */
        public Builder steps(Collection<? extends BuildStep> more) {
            more.forEach(this::step);
            return this;
        }

        /** Adds a {@link BuildStep.Run} step with the server's default timeout (30 min). */
        public Builder run(String shellCommand) {
            return step(new BuildStep.Run(shellCommand));
        }

        /** Adds a {@link BuildStep.Run} step that fails the build when it takes longer than {@code timeout} (at most 6 h). */
        public Builder run(String shellCommand, Duration timeout) {
            return step(new BuildStep.Run(shellCommand, Objects.requireNonNull(timeout, "timeout")));
        }

        /** Adds an {@link BuildStep.Env} step setting one variable. */
        public Builder env(String key, String value) {
            return step(new BuildStep.Env(Map.of(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"))));
        }

        /** Adds one {@link BuildStep.Env} step setting all of these. */
        public Builder env(Map<String, String> variables) {
            return step(new BuildStep.Env(variables));
        }

        /** Adds a {@link BuildStep.Workdir} step. */
        public Builder workdir(String path) {
            return step(new BuildStep.Workdir(path));
        }

        /** Adds a {@link BuildStep.User} step (the server accepts only {@code root} for now). */
        public Builder user(String user) {
            return step(new BuildStep.User(user));
        }

        /** Adds a {@link BuildStep.Copy} step, from the context ({@link #context} or {@link #contextDirectory}). */
        public Builder copy(String src, String dest) {
            return step(new BuildStep.Copy(src, dest));
        }

        /** The command the template's sandboxes are meant to start (Docker's CMD, exec form). */
        public Builder cmd(String... argv) {
            return cmd(Arrays.asList(argv));
        }

        public Builder cmd(List<String> argv) {
            if (dockerfile != null) throw new IllegalArgumentException("a dockerfile was already set: its CMD is the template's command");
            if (argv.isEmpty()) throw new IllegalArgumentException("cmd must name a program");
            for (String arg : argv) Objects.requireNonNull(arg, "a cmd argument is null");
            this.cmd = List.copyOf(argv);
            return this;
        }

        /** The context as a tar archive, plain or gzip'd (at most {@link #MAX_CONTEXT_BYTES}). */
        public Builder context(byte[] tarOrTarGz) {
            Objects.requireNonNull(tarOrTarGz, "tarOrTarGz");
            if (tarOrTarGz.length > MAX_CONTEXT_BYTES) {
                throw new IllegalArgumentException("the context is " + tarOrTarGz.length + " bytes; the server takes at most " + MAX_CONTEXT_BYTES);
            }
            this.context = tarOrTarGz.clone();
            return this;
        }

        /**
         * The context as this directory's tree, archived now (tar.gz): directories, files and
         * symbolic links (not followed) with their permission bits and times, owned by root;
         * sockets, FIFOs and devices are left out. The same tree gives the same archive, so the
         * server's cache of COPY steps holds across builds.
         *
         * @throws IllegalArgumentException when it is not a directory, or larger than {@link #MAX_CONTEXT_BYTES} compressed
         * @throws java.io.UncheckedIOException when it cannot be read
         */
        public Builder contextDirectory(Path directory) {
            this.context = ContextArchive.of(Objects.requireNonNull(directory, "directory"), MAX_CONTEXT_BYTES);
            return this;
        }

        /**
         * Pre-boots the template: after the steps the build starts {@code startCmd} (a shell
         * command) in the background, runs {@code readyCmd} every 250 ms until it exits 0, and keeps
         * the running sandbox as a memory checkpoint. Every sandbox of the template is then a
         * memory fork of it, its process already up (a dev server, a REPL). Such sandboxes take no
         * volumes or bucket mounts.
         */
        public Builder preboot(String startCmd, String readyCmd) {
            if (startCmd == null || startCmd.isBlank()) throw new IllegalArgumentException("a pre-boot needs a start command");
            if (readyCmd == null || readyCmd.isBlank()) {
                throw new IllegalArgumentException("a pre-boot needs a ready command: one that exits 0 once '" + startCmd + "' is ready");
            }
            this.startCmd = startCmd;
            this.readyCmd = readyCmd;
            return this;
        }

        /**
         * As {@link #preboot(String, String)}, failing the build when it is not ready within
         * {@code readyTimeout} (server default 5 min, at most 1 h).
         */
        public Builder preboot(String startCmd, String readyCmd, Duration readyTimeout) {
            Objects.requireNonNull(readyTimeout, "readyTimeout");
            if (readyTimeout.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("readyTimeout must be at least 1 ms, was " + readyTimeout);
            }
            preboot(startCmd, readyCmd);
            this.readyTimeout = readyTimeout;
            return this;
        }

        /** The build sandbox's limits; null fields keep the server's defaults. */
        public Builder resources(Resources resources) {
            this.resources = resources;
            return this;
        }

        /** Where the build's steps may connect; see {@link NetworkPolicy}. */
        public Builder network(NetworkPolicy network) {
            this.network = network;
            return this;
        }

        public TemplateBuildRequest build() {
            if (from == null && dockerfile == null) {
                throw new IllegalArgumentException("template " + name + ": give the template to build on (from) or a dockerfile");
            }
            return new TemplateBuildRequest(this);
        }
    }
}
