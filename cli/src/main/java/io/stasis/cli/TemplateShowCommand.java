package io.stasis.cli;

import io.stasis.sdk.TemplateInfo;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template show NAME}. */
@Command(name = "show", mixinStandardHelpOptions = true,
        description = "Show a template: its status and version, what its build set (FROM, WORKDIR, CMD, ENV, the pre-booted "
                + "command), and its latest build since the service started, with where and why it failed.")
final class TemplateShowCommand implements Callable<Integer> {
    /** How many of a failed build's last output lines the table shows; `stasis template logs` has all of it. */
    static final int OUTPUT_LINES = 10;

    @ParentCommand
    TemplateCommand parent;

    @Parameters(index = "0", paramLabel = "NAME", description = "Template name.")
    String name;

    @Override
    public Integer call() {
        TemplateInfo template = parent.root.client().templates().get(name);
        return parent.root.print(template, () -> render(template));
    }

    static String render(TemplateInfo t) {
        var table = Table.withoutHeaders()
                .row("NAME", t.name())
                .row("DESCRIPTION", t.description() == null || t.description().isEmpty() ? null : t.description())
                .row("STATUS", TemplatesCommand.status(t))
                .row("VERSION", t.version())
                .row("BUILT", HumanFormat.time(t.builtAt()))
                .row("SIZE", HumanFormat.size(t.sizeBytes()))
                .row("MESSAGE", t.message())
                .row("FROM", t.from())
                .row("WORKDIR", t.workdir())
                .row("CMD", t.cmd().isEmpty() ? null : HumanFormat.command(t.cmd()));
        if (t.isPrebooted()) table.row("PREBOOTED", t.startCmd()).row("READY WHEN", t.readyCmd());
        if (t.env().isEmpty()) table.row("ENV", null);
        boolean first = true;
        for (var e : t.env().entrySet()) {
            table.row(first ? "ENV" : "", e.getKey() + "=" + e.getValue());
            first = false;
        }
        TemplateInfo.Build b = t.build();
        if (b != null) {
            table.row("BUILD", build(b))
                    .row("STARTED", HumanFormat.time(b.startedAt()))
                    .row("ENDED", HumanFormat.time(b.endedAt()));
            TemplateInfo.BuildFailure f = b.failure();
            if (f != null) {
                table.row("FAILED STEP", f.step() == 0 ? "none (before the first step)"
                                : f.step() + (f.instruction().isEmpty() ? "" : ": " + f.instruction()))
                        .row("EXIT CODE", f.exitCode())
                        .row("ERROR", f.message());
                String[] lines = f.outputTail(OUTPUT_LINES).split("\n", -1);
                for (int i = 0; i < lines.length; i++) table.row(i == 0 ? "OUTPUT" : "", lines[i]);
            }
        }
        return table.render();
    }

    /** {@code ready: 5 steps, 3 cached}, {@code building step 2 of 5, 1 cached}, {@code failed at step 2 of 5, 0 cached}. */
    static String build(TemplateInfo.Build b) {
        String cached = b.cachedSteps() + " cached";
        return switch (b.status()) {
            case "building" -> "building step " + b.step() + " of " + b.steps() + ", " + cached;
            case "failed" -> "failed at step " + b.step() + " of " + b.steps() + ", " + cached;
            case "ready" -> "ready: " + b.steps() + (b.steps() == 1 ? " step, " : " steps, ") + cached;
            case null, default -> b.status() + ": step " + b.step() + " of " + b.steps() + ", " + cached;
        };
    }
}
