package io.stasis.cli;

import io.stasis.sdk.BuildStep;
import io.stasis.sdk.EgressPolicy;
import io.stasis.sdk.Resources;
import io.stasis.sdk.TemplateBuildException;
import io.stasis.sdk.TemplateBuildRequest;
import io.stasis.sdk.TemplateInfo;
import io.stasis.sdk.Templates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template build NAME (-f DOCKERFILE | --from T [--run CMD]...)}: builds and watches until it ends. */
@Command(name = "build", mixinStandardHelpOptions = true,
        description = {"Build a template from a Dockerfile (-f: FROM, RUN, COPY, ENV, WORKDIR, USER, CMD), or from steps on "
                + "another template (--from with --run, --env, --workdir, --user and --copy, run in the order given).",
                "Prints the build's output on stderr as it comes (--quiet: only a progress line, on a terminal), then the "
                        + "template on stdout; exits 0 when it is ready, and 1 when the build failed, saying which step, its "
                        + "instruction and exit code, and the output's last lines. Interrupting stops the watching, not the build "
                        + "(stasis template logs NAME --follow).",
                "COPY and --copy take files from the context: --context DIR sends that directory (as a tar.gz, at most 32 MiB "
                        + "compressed); without --context none is sent.",
                "Without --egress-default, --allow or --deny a build may reach only what the server's operator allows builds "
                        + "(by default the host's package mirrors, for apt-get): steps that download from elsewhere need --allow with "
                        + "their hosts, or --egress-default allow."},
        footerHeading = "%nExamples:%n",
        footer = {"  stasis template build web -f Dockerfile --context --allow pypi.org,files.pythonhosted.org",
                "  stasis template build tools --from base --egress-default allow \\",
                "      --run 'apt-get update && apt-get install -y make' --workdir /src \\",
                "      --copy Makefile:. --context ./src --cmd 'make watch'",
                "  stasis create --template web"})
final class TemplateBuildCommand implements Callable<Integer> {
    /** What picocli gives {@code --context} when it has no value: the Dockerfile's directory (or the current one). */
    private static final String BESIDE_DOCKERFILE = "";

    @ParentCommand
    TemplateCommand parent;

    @Parameters(index = "0", paramLabel = "NAME", description = "The template's name: 1-63 of a-z 0-9 . _ -, starting with a letter or digit.")
    String name;

    @Option(names = {"-f", "--file"}, paramLabel = "DOCKERFILE", description = "Build from this Dockerfile (- reads it from stdin).")
    String dockerfile;

    @Option(names = "--context", paramLabel = "DIR", arity = "0..1", fallbackValue = BESIDE_DOCKERFILE,
            description = "Send DIR as the build's context, what COPY and --copy copy from. Without DIR: the Dockerfile's "
                    + "directory (with -f), else the current one.")
    String context;

    @Option(names = "--from", paramLabel = "T", description = "The template to build on (tiny, base, or one of yours).")
    String from;

    /** Each step option's occurrence is one step, in command-line order (picocli keeps a repeated group's order). */
    @ArgGroup(exclusive = true, multiplicity = "0..*", heading = "Steps, run in the order given (with --from):%n")
    List<StepOption> steps = new ArrayList<>();

    @Option(names = "--cmd", paramLabel = "COMMAND",
            description = "The command the template's sandboxes are meant to start, run by /bin/sh -c (a Dockerfile's CMD instead).")
    String cmd;

    @Option(names = "--start-cmd", paramLabel = "SHELL-COMMAND",
            description = "Pre-boot the template: start this in the background after the steps, wait for --ready-cmd, and keep it "
                    + "running in memory, so that every sandbox of the template starts with it up (as a memory fork).")
    String startCmd;

    @Option(names = "--ready-cmd", paramLabel = "SHELL-COMMAND",
            description = "With --start-cmd: the command that exits 0 once it is ready (run every 250 ms).")
    String readyCmd;

    @Option(names = "--ready-timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "With --start-cmd: fail the build when not ready within this (default: the server's, 5m; at most 1h).")
    Duration readyTimeout;

    @Option(names = "--cpus", paramLabel = "X", description = "CPUs of the build's sandbox, 0.1-64.")
    Double cpus;

    @Option(names = "--memory-mb", paramLabel = "N", description = "Memory of the build's sandbox in MiB.")
    Integer memoryMb;

    @Option(names = "--pids", paramLabel = "N", description = "Maximum number of processes in the build's sandbox.")
    Integer pids;

    @Option(names = "--disk-mb", paramLabel = "N", description = "Room in MiB for what the build writes.")
    Integer diskMb;

    @Option(names = "--egress-default", paramLabel = "allow|deny", converter = EgressOptions.DefaultConverter.class,
            description = "The build's network policy: what happens to destinations no entry names (default: deny). "
                    + "Without --egress-default, --allow and --deny the server's policy for builds applies.")
    EgressPolicy.Action egressDefault;

    @Mixin
    EgressOptions egress;

    @Option(names = {"-q", "--quiet"}, description = "Do not print the build's output; show a progress line instead (on a terminal).")
    boolean quiet;

    /** One step: exactly one of its options ("required" in a repeating exclusive group: each occurrence completes an instance). */
    static final class StepOption {
        @Option(names = "--run", required = true, paramLabel = "SHELL-COMMAND",
                description = "Run a command with /bin/sh -c; a non-zero exit fails the build.")
        String run;

        @Option(names = "--env", required = true, paramLabel = "K=V",
                description = "Set a variable for later steps and the template's sandboxes.")
        String env;

        @Option(names = "--workdir", required = true, paramLabel = "DIR",
                description = "Run later steps in DIR (made if missing); the template's working directory.")
        String workdir;

        @Option(names = "--user", required = true, paramLabel = "USER",
                description = "Run later steps as USER: a user of the template (name or uid, optionally :group).")
        String user;

        // One value, not two: a repeating exclusive group ends its instance only after single-value options.
        @Option(names = "--copy", required = true, paramLabel = "SRC:DEST",
                description = "Copy SRC from the context (. for all of it) to DEST (absolute, or relative to the working directory).")
        String copy;

        BuildStep step() {
            if (run != null) return new BuildStep.Run(run);
            if (workdir != null) return new BuildStep.Workdir(workdir);
            if (user != null) return new BuildStep.User(user);
            if (copy != null) {
                int colon = copy.lastIndexOf(':'); // DEST is a path in the sandbox: no colon there
                if (colon <= 0 || colon == copy.length() - 1) throw new UsageException("--copy takes SRC:DEST, was '" + copy + "'");
                return new BuildStep.Copy(copy.substring(0, colon), copy.substring(colon + 1));
            }
            int eq = env.indexOf('=');
            if (eq <= 0) throw new UsageException("--env takes K=V, was '" + env + "'");
            return new BuildStep.Env(Map.of(env.substring(0, eq), env.substring(eq + 1)));
        }
    }

    @Override
    public Integer call() {
        var root = parent.root;
        TemplateBuildRequest request = request();
        Templates templates = root.client().templates();
        if (request.contextBytes() == 0) {
            templates.build(request);
        } else {
            // Up to 43 MiB of JSON to send: worth a line on a slow link.
            String sending = "sending " + name + " with " + HumanFormat.size((long) request.contextBytes()) + " of context";
            try (var progress = Progress.ticking(root, sending)) {
                templates.build(request);
            }
        }
        TemplateInfo built;
        try {
            built = quiet ? awaitShowingProgress(templates) : followOutput(templates);
        } catch (TemplateBuildException failed) {
            if (root.json()) root.printJson(failed.template());
            root.io().out().flush();
            // The output's last lines are in the message; a followed build has just printed them.
            String message = failed.getMessage();
            root.io().err().println("error: " + (quiet ? message : message.lines().findFirst().orElse("")));
            return ExitCodes.ERROR;
        }
        return root.print(built, () -> summary(built) + "\n");
    }

    /** The request the options describe; usage errors before anything is read or sent. */
    private TemplateBuildRequest request() {
        var builder = TemplateBuildRequest.builder(name);
        if (dockerfile != null) {
            if (from != null || !steps.isEmpty() || cmd != null) {
                throw new UsageException("-f takes FROM, the steps and CMD from the Dockerfile: drop --from, --run, --env, --workdir, "
                        + "--user, --copy and --cmd, or drop -f");
            }
            parent.root.io().requireLocal("template build -f reads this process's files");
            builder.dockerfile(readDockerfile());
        } else {
            if (from == null) throw new UsageException("give a Dockerfile (-f) or the template to build on (--from) with steps");
            builder.from(from);
            for (StepOption step : steps) builder.step(step.step());
            if (cmd != null) builder.cmd("/bin/sh", "-c", cmd); // as a Dockerfile's shell-form CMD
        }
        if (context != null) {
            parent.root.io().requireLocal("template build --context reads this process's files");
            builder.contextDirectory(contextDirectory());
        }
        if (startCmd != null || readyCmd != null || readyTimeout != null) {
            if (startCmd == null || readyCmd == null) throw new UsageException("a pre-boot needs both --start-cmd and --ready-cmd");
            if (readyTimeout == null) builder.preboot(startCmd, readyCmd);
            else builder.preboot(startCmd, readyCmd, readyTimeout);
        }
        if (cpus != null || memoryMb != null || pids != null || diskMb != null) builder.resources(new Resources(cpus, memoryMb, pids, diskMb));
        if (egressDefault != null || !egress.isEmpty()) builder.network(egress.policy(egressDefault));
        return builder.build();
    }

    private String readDockerfile() {
        CliIo io = parent.root.io();
        try {
            if (dockerfile.equals("-")) return new String(io.in().readAllBytes(), StandardCharsets.UTF_8);
            return Files.readString(io.local(Path.of(dockerfile)));
        } catch (NoSuchFileException e) {
            throw new UncheckedIOException("cannot read the Dockerfile " + dockerfile + ": no such file", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Dockerfile " + dockerfile + ": " + e.getMessage(), e);
        }
    }

    private Path contextDirectory() {
        CliIo io = parent.root.io();
        if (!context.equals(BESIDE_DOCKERFILE)) return io.local(Path.of(context));
        if (dockerfile == null || dockerfile.equals("-")) return io.cwd();
        Path parentDir = io.local(Path.of(dockerfile)).getParent();
        return parentDir == null ? io.cwd() : parentDir;
    }

    /** Prints the output on stderr as it comes; the template once the build has ended. */
    private TemplateInfo followOutput(Templates templates) {
        CliIo io = parent.root.io();
        long[] at = {0};
        templates.followLogs(name, 0, log -> {
            TemplateLogsCommand.printDropped(io, at[0], log);
            io.err().print(log.output());
            io.err().flush();
            at[0] = log.next();
        });
        return templates.awaitBuild(name, null); // it has ended: this says how
    }

    /** Waits with a progress line on a terminal ({@code building app: step 2 of 5 (1 cached)... 12s}). */
    private TemplateInfo awaitShowingProgress(Templates templates) {
        long started = System.nanoTime();
        try (var progress = Progress.start(parent.root)) {
            return templates.awaitBuild(name, null, t -> progress.show(progressLine(t, Duration.ofNanos(System.nanoTime() - started))));
        }
    }

    static String progressLine(TemplateInfo t, Duration elapsed) {
        TemplateInfo.Build b = t.build();
        String where = b == null || b.steps() == 0 ? ""
                : b.step() == 0 ? ": starting (" + b.steps() + " steps, " + b.cachedSteps() + " cached)"
                : ": step " + b.step() + " of " + b.steps() + " (" + b.cachedSteps() + " cached)";
        return "building " + t.name() + where + "... " + elapsed.toSeconds() + "s";
    }

    /** {@code web version 3 ready (5 steps, 4 cached; 212 MiB)}. */
    static String summary(TemplateInfo t) {
        var text = new StringBuilder(t.name()).append(" version ").append(t.version()).append(' ').append(t.status());
        var details = new ArrayList<String>();
        TemplateInfo.Build b = t.build();
        if (b != null) details.add(b.steps() + (b.steps() == 1 ? " step, " : " steps, ") + b.cachedSteps() + " cached");
        if (t.sizeBytes() != null) details.add(HumanFormat.size(t.sizeBytes()));
        if (!details.isEmpty()) text.append(" (").append(String.join("; ", details)).append(')');
        return text.toString();
    }
}
